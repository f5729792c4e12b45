#include "ddp_checks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_stats.h"

void ddp_params_digest(const void *params, size_t n, size_t elem_size, ddp_digest *out)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *bytes = params;
    for (size_t k = 0; k < n * elem_size; k++) {
        h ^= bytes[k];
        h *= 0x100000001b3ull;
    }
    double sum = 0;
    bool finite = true;
    for (size_t k = 0; k < n; k++) {
        double v = elem_size == sizeof(double) ? ((const double *)params)[k] : ((const float *)params)[k];
        finite = finite && isfinite(v);
        sum += v;
    }
    out->hash = h;
    out->sum = sum;
    out->finite = finite;
}

int ddp_loss_window(int steps)
{
    int w = steps / 10;
    return w < 1 ? 1 : w > 20 ? 20 : w;
}

double ddp_mean(const double *curve, int from, int count)
{
    if (!curve || from < 0 || count < 1)
        return NAN; /* no step, or a window before the curve: nothing to average, never a read out of it */
    double s = 0;
    for (int k = 0; k < count; k++)
        s += curve[from + k];
    return count > 0 ? s / count : NAN;
}

static ga_where where_rank(const ddp_record *r)
{
    return (ga_where){r->hdr.host, r->hdr.node_index, r->hdr.world_rank, r->hdr.device_index};
}

/* The hash most ranks hold; a tie goes to the one the lowest rank holds. */
static int majority_rank(const ddp_record *all, int n)
{
    int best = 0, best_count = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = all[j].param_hash == all[i].param_hash;
        if (seen)
            continue;
        int count = 0;
        for (int j = i; j < n; j++)
            count += all[j].param_hash == all[i].param_hash;
        if (count > best_count) {
            best = i;
            best_count = count;
        }
    }
    return best;
}

static void check_replicas(const ddp_record *all, int n, ga_findings *f, ddp_outcome *out)
{
    int ref = majority_rank(all, n);
    out->reference_rank = all[ref].hdr.world_rank;
    out->reference_hash = all[ref].param_hash;
    out->mismatched = calloc((size_t)n, sizeof *out->mismatched);
    int sharing = 0;
    for (int i = 0; i < n; i++)
        sharing += all[i].param_hash == all[ref].param_hash;
    for (int i = 0; i < n; i++) {
        if (all[i].param_hash == all[ref].param_hash)
            continue;
        if (out->mismatched)
            out->mismatched[out->n_mismatched] = all[i].hdr.world_rank;
        out->n_mismatched++;
        ga_findings_add(f, GA_SEV_FAIL, "DDP_REPLICA_MISMATCH", where_rank(&all[i]),
                        "rank %d on %s ends with different parameters (hash %016llx, sum %.9g) from rank %d "
                        "(hash %016llx, sum %.9g, shared by %d of %d ranks): the replicas diverged",
                        all[i].hdr.world_rank, all[i].hdr.host, (unsigned long long)all[i].param_hash,
                        all[i].param_sum, out->reference_rank, (unsigned long long)all[ref].param_hash,
                        all[ref].param_sum, sharing, n);
    }
    out->replicas_identical = out->n_mismatched == 0;
}

static void check_stragglers(const ddp_record *all, int n, const ddp_check_opts *o, ga_findings *f)
{
    if (n < 3 || o->straggler_ratio <= 0)
        return;
    double *compute = malloc((size_t)n * sizeof *compute);
    if (!compute)
        return;
    for (int i = 0; i < n; i++)
        compute[i] = all[i].step_time_ms - all[i].comm_wait_ms;
    qsort(compute, (size_t)n, sizeof *compute, ga_cmp_double);
    double median = compute[n / 2];
    free(compute);
    for (int i = 0; i < n; i++) {
        double c = all[i].step_time_ms - all[i].comm_wait_ms;
        if (median > 0 && c > o->straggler_ratio * median)
            ga_findings_add(f, GA_SEV_WARN, "DDP_STRAGGLER", where_rank(&all[i]),
                            "rank %d on %s computes a step in %.3f ms, %.2fx the median %.3f ms: every other "
                            "rank waits for it",
                            all[i].hdr.world_rank, all[i].hdr.host, c, c / median, median);
    }
}

void ddp_analyse(const ddp_record *all, int n, const ddp_check_opts *o, ga_findings *f, ddp_outcome *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return;
    const ddp_record *r0 = &all[0];
    out->steps = r0->steps_done;
    out->loss_start = r0->loss_start;
    out->loss_end = r0->loss_end;
    out->accuracy_end = r0->accuracy_end;
    out->improvement = r0->loss_start > 0 ? (r0->loss_start - r0->loss_end) / r0->loss_start : NAN;

    double slowest = 0, wait = 0, frac = 0;
    for (int i = 0; i < n; i++) {
        if (all[i].train_s > slowest)
            slowest = all[i].train_s;
        if (all[i].step_time_ms > out->step_time_ms)
            out->step_time_ms = all[i].step_time_ms;
        wait += all[i].comm_wait_ms;
        frac += all[i].comm_fraction;
        if (all[i].hdr.status != GA_EXIT_PASS)
            ga_findings_add(f, GA_SEV_FAIL, "DDP_RANK_FAILED", where_rank(&all[i]), "rank %d on %s: %s",
                            all[i].hdr.world_rank, all[i].hdr.host, all[i].hdr.message);
    }
    out->comm_wait_ms = wait / n;
    out->comm_fraction = frac / n;
    out->samples_per_s = slowest > 0 ? (double)o->global_batch * r0->timed_steps / slowest : 0;

    bool nonfinite = r0->nonfinite_step >= 0;
    if (nonfinite)
        ga_findings_add(
            f, GA_SEV_FAIL, "DDP_NONFINITE", GA_WHERE_CLUSTER,
            "the global loss became NaN or Inf at step %d (loss_curve step %d): training diverged "
            "(lower --lr) or a rank computed garbage",
            r0->nonfinite_step + 1, r0->nonfinite_step);
    for (int i = 0; i < n; i++)
        if (!all[i].params_finite) {
            nonfinite = true;
            ga_findings_add(f, GA_SEV_FAIL, "DDP_NONFINITE", where_rank(&all[i]),
                            "rank %d on %s holds NaN or Inf parameters after training", all[i].hdr.world_rank,
                            all[i].hdr.host);
        }

    check_replicas(all, n, f, out);

    if (!nonfinite && !(out->improvement >= o->min_improvement))
        ga_findings_add(f, GA_SEV_FAIL, "DDP_LOSS_NOT_IMPROVED", GA_WHERE_CLUSTER,
                        "the loss fell from %.6g to %.6g in %d steps, an improvement of %.1f%%, below "
                        "--min-improvement %.1f%%",
                        out->loss_start, out->loss_end, out->steps, 100.0 * out->improvement,
                        100.0 * o->min_improvement);
    check_stragglers(all, n, o, f);
}

void ddp_outcome_free(ddp_outcome *out)
{
    free(out->mismatched);
    out->mismatched = NULL;
}
