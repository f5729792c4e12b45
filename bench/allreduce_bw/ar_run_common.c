/* allreduce_bw: the helpers every pattern uses (backend, records, descriptors, accounting, bounded
 * iterations). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_run.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_report.h"

ar_backend_setup ar_backend_defaults = {.cta_policy = -1};

ar_backend *ar_backend_open(ga_backend kind, MPI_Comm comm, size_t max_bytes, const char *what)
{
#if GA_HAVE_CUDA
    if (kind == GA_BACKEND_GPU)
        return ar_nccl_backend_new(comm, max_bytes, ga_deadline_wait_timeout(), what, &ar_backend_defaults);
#endif
    (void)kind;
    (void)what;
    return ar_host_backend_new(comm, max_bytes, &ar_backend_defaults);
}

void ar_gather_records(const ga_ctx *ctx, const ar_record *mine, ar_record **all, double bound,
                       const char *what)
{
    ga_deadline_arm_for(bound, "gathering the records of %s", what);
    ga_gather_records(ctx, mine, sizeof *mine, (void **)all);
    ga_deadline_disarm();
}

void ar_rec_set_free(rec_set *s)
{
    free(s->recs);
    free(s->group_of);
}

/* Every rank's record in its communicator: one, or one per NCCL_TESTS_SPLIT_MASK group. */
rec_set ar_rec_set_world(const ar_record *all, int n)
{
    rec_set s = {malloc((size_t)n * sizeof *s.recs), calloc((size_t)n, sizeof *s.group_of), n, 1};
    if (!s.recs || !s.group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++) {
        s.recs[i] = &all[i];
        s.group_of[i] = all[i].group;
        s.n_groups = all[i].group >= s.n_groups ? all[i].group + 1 : s.n_groups;
    }
    return s;
}

static json_t *combination_json(const ar_sweep_desc *d, const rec_set *set, ar_figures *fig)
{
    json_t *results = ar_results_json(d, set->recs, set->group_of, set->n, set->n_groups, fig);
    return json_pack("{s:s, s:s, s:o, s:f, s:f, s:I, s:I, s:i}", "datatype", ar_dtype_get(d->type)->name,
                     "op", ar_coll_get(d->coll)->reduces ? ar_op_name(d->op) : "none", "results", results,
                     "avg_busbw_GBps", fig->avg_busbw, "busbw_at_max_GBps", fig->busbw_at_max, "max_bytes",
                     (json_int_t)fig->max_bytes, "wrong_total", (json_int_t)fig->wrong_total, "out_of_bounds",
                     fig->out_of_bounds);
}

ar_sweep_desc ar_desc_of(const ar_opts *o, combo c, const uint64_t *sizes, int n_sizes)
{
    return (ar_sweep_desc){o->coll, c.type, c.op, o->root, sizes, n_sizes, (ar_time_mode)o->average};
}

ar_sweep_cfg ar_cfg_of(const ar_opts *o, combo c, const uint64_t *sizes, int n_sizes, const char *label)
{
    /* -T bounds each timed loop, one wait; the runners add the phase's deadline and their gate */
    return (ar_sweep_cfg){.coll = o->coll,
                          .type = c.type,
                          .op = c.op,
                          .root = o->root,
                          .iters = o->iters,
                          .warmup = o->warmup,
                          .check = o->check,
                          .sizes = sizes,
                          .n_sizes = n_sizes,
                          .label = label,
                          .agg_iters = o->agg_iters,
                          .blocking = o->blocking,
                          .per_iter = o->per_iter && !o->pairs,
                          .wait_bound = ga_deadline_wait_timeout()};
}

/* Rank 0: what one sweep adds to the run: its combination entry, totals and findings. check_busbw: hold its
 * busbw to min_busbw; first: its figures are the world's headline ones. */
void ar_account_sweep(run_state *st, const ar_sweep_desc *d, const rec_set *set, double min_busbw,
                      bool check_busbw, bool first, const char *pattern)
{
    ar_figures fig;
    json_t *entry = combination_json(d, set, &fig);
    json_object_set_new(entry, "pattern", json_string(pattern));
    json_array_append_new(st->out.combos, entry);
    st->out.wrong_total += fig.wrong_total;
    st->out.out_of_bounds += fig.out_of_bounds;
    if (first)
        st->out.first_fig = fig;
    /* The floor holds the best measurement of the largest size (remeasure_world_max); the figures reported
     * stay the sweep's, as its table and results show them. */
    ar_figures held = fig;
    if (first && st->world_measurements > 1) {
        if (st->world_best_busbw > held.busbw_at_max)
            held.busbw_at_max = st->world_best_busbw;
        json_object_set_new(entry, "busbw_at_max_measurements", json_integer(st->world_measurements));
        json_object_set_new(entry, "busbw_at_max_best_GBps", json_real(held.busbw_at_max));
    }
    ar_sweep_findings(d, set->recs, set->n, &held, min_busbw, check_busbw, st->findings);
}

void ar_run_sweep_cut(run_state *st, const char *pattern, uint64_t reached, uint64_t asked)
{
    /* one warning for the run: the not-covered lines say which combination and pattern stopped where */
    if (ga_findings_has_code(st->findings, "COMM_SWEEP_CUT"))
        return;
    ga_findings_add(st->findings, GA_SEV_WARN, "COMM_SWEEP_CUT", GA_WHERE_CLUSTER,
                    "the %s sweep stopped at %llu B of the %llu B asked for: out of time (--timeout); the "
                    "bandwidth of the larger sizes was not measured",
                    pattern, (unsigned long long)reached, (unsigned long long)asked);
}

void ar_run_not_covered(run_state *st, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!st->out.not_covered)
        st->out.not_covered = json_array();
    json_array_append_new(st->out.not_covered, json_string(line));
    ga_log("COMM", "not covered: %s", line);
}

/* Rank 0: the busbw at the largest size of the ranks of one group (their records), and the iterations they
 * ran. Returns 0 when no rank was in the group. */
double ar_group_busbw(const ar_record *all, int n, int group, const ar_sweep_desc *d, int *iters)
{
    const ar_sample **samples = malloc((size_t)n * sizeof *samples);
    int *group_of = calloc((size_t)n, sizeof *group_of);
    if (!samples || !group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int m = 0;
    for (int i = 0; i < n; i++)
        if (all[i].group == group) {
            samples[m++] = &all[i].samples[d->n_sizes - 1];
            if (iters)
                *iters = all[i].iters;
        }
    ar_line l;
    double bw =
        m > 0 && ar_line_compute(d, d->n_sizes - 1, samples, group_of, m, 1, &l) == 0 ? l.busbw[0] : 0;
    free(samples);
    free(group_of);
    return bw;
}

double ar_group_cpu_wait(const ar_record *all, int n, int group, const ar_sweep_desc *d)
{
    double least = -1;
    for (int i = 0; i < n; i++) {
        double w = all[i].group == group ? all[i].samples[d->n_sizes - 1].cpu_wait[0] : -1;
        if (w >= 0 && (least < 0 || w < least))
            least = w;
    }
    return least;
}
