/* What every program's estimate model shares (ga_estimate.h): the launch, small collectives and the gather of
 * records, the alpha-beta time of a collective, the fixed model, and the program's arguments read as words.
 */
#include "ga_estimate.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_parse.h"

double ga_est_launch_s(const ga_est_figures *f, int nodes)
{
    return f->launch_s + f->launch_per_node_s * nodes;
}

double ga_est_mpi_small_s(const ga_est_figures *f, int ranks)
{
    return ranks > 1 ? f->mpi_alpha * ceil(log2((double)ranks)) : 0;
}

double ga_est_gather_s(const ga_est_figures *f, int ranks, double bytes_each)
{
    return ga_est_mpi_small_s(f, ranks) + ranks * bytes_each / (f->mpi_GBps * 1e9);
}

double ga_est_bus_s(const ga_est_figures *f, size_t bytes, double carried_GB, int ranks, int nodes, bool slow)
{
    if (ranks <= 1) /* one rank: the check's copies alone */
        return f->alpha_intra + (double)bytes / (f->copy_GBps * 1e9);
    if (nodes < 2)
        return f->alpha_intra + carried_GB / f->busbw_intra;
    double busbw = f->busbw_inter / (slow ? f->slow_factor : 1);
    return f->alpha_inter + f->alpha_per_doubling * log2((double)nodes / 2) + carried_GB / busbw;
}

double ga_est_allreduce_s(const ga_est_figures *f, size_t size_bytes, size_t elem_size, int ranks, int nodes,
                          bool slow)
{
    size_t bytes = size_bytes / elem_size * elem_size;
    /* nccl-tests' bus factor of an allreduce, 2 (n - 1) / n */
    double carried = ranks > 1 ? (double)bytes / 1e9 * (2.0 * (ranks - 1) / ranks) : 0;
    return ga_est_bus_s(f, bytes, carried, ranks, nodes, slow);
}

int ga_est_fixed(const ga_estimate_in *in, double work_s, ga_estimate_out *out)
{
    int world = in->c->nodes * in->c->ranks_per_node;
    snprintf(
        out->model, sizeof out->model,
        "fixed: launch %.0f s + %.0f ms per node, its checks %.1f s, gather and report %.1f s; a slow link "
        "changes nothing",
        in->f->launch_s, in->f->launch_per_node_s * 1e3, work_s, in->f->report_s);
    out->run_s = work_s + ga_est_gather_s(in->f, world, 4096) + in->f->report_s;
    return 0;
}

const char *ga_est_arg_value(const json_t *args, const char *long_name, char short_key)
{
    const char *found = NULL;
    size_t n = json_array_size(args), len = strlen(long_name);
    for (size_t i = 0; i < n; i++) {
        const char *w = json_string_value(json_array_get(args, i));
        if (!w)
            continue;
        bool is_long = strncmp(w, "--", 2) == 0 && strncmp(w + 2, long_name, len) == 0;
        if (is_long && w[2 + len] == '=')
            found = w + 3 + len;
        else if (i + 1 < n &&
                 ((is_long && !w[2 + len]) || (short_key && w[0] == '-' && w[1] == short_key && !w[2])))
            found = json_string_value(json_array_get(args, i + 1));
    }
    return found;
}

bool ga_est_arg_flag(const json_t *args, const char *word)
{
    size_t i;
    json_t *v;
    json_array_foreach(args, i, v)
        if (json_string_value(v) && strcmp(json_string_value(v), word) == 0)
            return true;
    return false;
}

double ga_est_arg_num(const json_t *args, const char *long_name, char short_key, double dflt)
{
    const char *v = ga_est_arg_value(args, long_name, short_key);
    double x;
    char err[64];
    return v && ga_parse_double(v, -1e15, 1e15, &x, err, sizeof err) == 0 ? x : dflt;
}

double ga_est_arg_size(const json_t *args, const char *long_name, char short_key, double dflt)
{
    const char *v = ga_est_arg_value(args, long_name, short_key);
    uint64_t x;
    char err[64];
    return v && ga_parse_size(v, &x, err, sizeof err) == 0 ? (double)x : dflt;
}

char **ga_est_argv(const char *program, const json_t *args, int *argc)
{
    size_t n = json_array_size(args);
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        return NULL;
    argv[0] = strdup(program);
    for (size_t i = 0; i < n; i++) {
        const char *w = json_string_value(json_array_get(args, i));
        argv[i + 1] = strdup(w ? w : "");
    }
    *argc = (int)n + 1;
    for (int i = 0; i < *argc; i++)
        if (!argv[i]) {
            ga_est_argv_free(argv, *argc);
            return NULL;
        }
    return argv;
}

void ga_est_argv_free(char **argv, int argc)
{
    for (int i = 0; argv && i < argc; i++)
        free(argv[i]);
    free(argv);
}
