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

MPI_Comm ar_split_groups(const ga_ctx *ctx, int color, ar_record *mine, double bound, const char *groups,
                         const char *what)
{
    memset(mine, 0, sizeof *mine);
    ga_record_header_init(ctx, &mine->hdr);
    mine->group = color == MPI_UNDEFINED ? -1 : color;
    MPI_Comm gc = MPI_COMM_NULL;
    ga_deadline_arm_for(bound, "splitting the world into the %s of %s", groups, what);
    GA_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, ctx->world_rank, &gc));
    ga_deadline_disarm();
    return gc;
}

void ar_sweep_group(ga_backend kind, MPI_Comm *gc, const ar_sweep_cfg *cfg, ar_record *mine,
                    const char *label)
{
    int n;
    MPI_Comm_size(*gc, &n);
    ar_backend *b = ar_backend_open(kind, *gc, ar_bench_max_bytes(cfg, n), label);
    ar_bench_sweep(b, cfg, mine, NULL, NULL);
    b->destroy(b);
    MPI_Comm_free(gc);
}

void ar_keep_first_records(run_state *st, ar_record **rounds_all, int rounds)
{
    if (!st->node_records)
        st->node_records = rounds_all[0];
    else
        free(rounds_all[0]);
    for (int r = 1; r < rounds; r++)
        free(rounds_all[r]);
}

void ar_remeasure_list_fill(const ga_pair *pairs, int n_pairs, const int *batch_of, int (*list)[4])
{
    for (int i = 0, k = 0; i < n_pairs; i++)
        if (batch_of[i] >= 0) {
            list[k][0] = pairs[i].member[0], list[k][1] = pairs[i].member[1];
            list[k][2] = batch_of[i], list[k][3] = i;
            k++;
        }
}

int ar_remeasure_color(int (*list)[4], int count, int batch, int me)
{
    int color = MPI_UNDEFINED;
    for (int k = 0; k < count; k++)
        if (list[k][2] == batch && (list[k][0] == me || list[k][1] == me))
            color = k;
    return color;
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

/* Rank 0: one sweep's records as the report takes them (ar_report_sweep). */
void ar_account_sweep(run_state *st, const ar_sweep_desc *d, const rec_set *set, double min_busbw,
                      bool check_busbw, bool first, const char *pattern)
{
    ar_sweep_outcome s = {.desc = *d,
                          .recs = set->recs,
                          .group_of = set->group_of,
                          .n = set->n,
                          .n_groups = set->n_groups,
                          .pattern = pattern,
                          .min_busbw = min_busbw,
                          .check_busbw = check_busbw,
                          .first = first,
                          .measurements = st->world_measurements,
                          .best_busbw = st->world_best_busbw};
    ar_report_sweep(&st->out, st->findings, &s);
}

void ar_run_not_covered(run_state *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ar_outcome_vnote(&st->out, fmt, ap);
    va_end(ap);
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
