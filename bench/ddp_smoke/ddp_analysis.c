#include "ddp_analysis.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_commshare.h"
#include "ga_exit.h"
#include "ga_outlier.h"
#include "ga_replicas.h"

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
    return ga_record_where(&r->hdr);
}

/* The hash most ranks hold; a tie goes to the one the lowest rank holds (ga_replicas_majority: n log n, for
 * thousands of ranks); rank 0's when memory runs out. */
static int majority_rank(const ddp_record *all, int n)
{
    return ga_replicas_majority_record(all, n, sizeof *all, offsetof(ddp_record, param_hash));
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

double ddp_compute_ms(const ddp_record *r)
{
    return r->compute_measured > 0 ? r->compute_ms : r->step_time_ms - r->comm_wait_ms;
}

void ddp_add_compute(ddp_record *r, double compute_ms)
{
    if (r->compute_measured < DDP_MAX_MEASUREMENTS)
        r->compute_measurements[r->compute_measured] = compute_ms;
    if (r->compute_measured == 0 || compute_ms < r->compute_ms)
        r->compute_ms = compute_ms;
    r->compute_measured++;
}

/* The outlier rule over the ranks' compute times (lower is better), or NULL when the check is off, there are
 * fewer than two ranks, or memory runs out (free it). */
static ga_outlier_verdict *judge_compute(const ddp_record *all, int n, const ddp_check_opts *o)
{
    if (n < 2 || o->straggler_ratio <= 1)
        return NULL;
    double *c = malloc((size_t)n * sizeof *c);
    const double **lists = malloc((size_t)n * sizeof *lists);
    int *counts = malloc((size_t)n * sizeof *counts);
    ga_outlier_verdict *v = NULL;
    if (c && lists && counts) {
        for (int i = 0; i < n; i++) {
            c[i] = ddp_compute_ms(&all[i]);
            lists[i] = all[i].compute_measurements;
            counts[i] = all[i].compute_measured < DDP_MAX_MEASUREMENTS ? all[i].compute_measured
                                                                       : DDP_MAX_MEASUREMENTS;
        }
        /* how much one rank's compute time moves between windows is noise too */
        v = ga_outlier_judge_repeated(c, lists, counts, n, o->straggler_ratio - 1, GA_LOWER_IS_BETTER);
    }
    free(c);
    free(lists);
    free(counts);
    return v;
}

bool ddp_straggler_suspects(const ddp_record *all, int n, const ddp_check_opts *o, char *why, size_t why_len)
{
    ga_outlier_verdict *v = judge_compute(all, n, o);
    int first = -1, suspects = ga_outlier_suspects(v, n, &first);
    if (suspects && why_len)
        snprintf(why, why_len, "rank %d computes a step in %.3f ms, %.2fx the %s %.3f ms (%d suspect%s)",
                 all[first].hdr.world_rank, ddp_compute_ms(&all[first]),
                 ddp_compute_ms(&all[first]) / v[first].ref_median,
                 v[first].call == GA_OUTLIER_PAIR_DIFFERS ? "other rank's" : "median", v[first].ref_median,
                 suspects, suspects == 1 ? "" : "s");
    free(v);
    return suspects > 0;
}

/* Adds DDP_STRAGGLER and DDP_PEERS_DIFFER; returns how many ranks computed slower than their peers. */
static int check_stragglers(const ddp_record *all, int n, const ddp_check_opts *o, ga_findings *f)
{
    ga_outlier_verdict *v = judge_compute(all, n, o);
    int slow = 0;
    for (int i = 0; v && i < n; i++) {
        slow += v[i].call == GA_OUTLIER_WORSE || v[i].call == GA_OUTLIER_PAIR_DIFFERS;
        double c = ddp_compute_ms(&all[i]);
        char best[32] = "";
        if (all[i].compute_measured > 1)
            snprintf(best, sizeof best, " (best of %d)", all[i].compute_measured);
        if (v[i].call == GA_OUTLIER_WORSE)
            ga_findings_add(
                f, GA_SEV_WARN, "DDP_STRAGGLER", where_rank(&all[i]),
                "rank %d on %s computes a step in %.3f ms%s, %.2fx the others' median %.3f ms and "
                "above their bound %.3f ms (--straggler %.0f%%, their noise %.1f%%): every other "
                "rank waits for it",
                all[i].hdr.world_rank, all[i].hdr.host, c, best, c / v[i].ref_median, v[i].ref_median,
                v[i].bound, 100.0 * (o->straggler_ratio - 1), 100.0 * v[i].spread);
        int j = v[i].other;
        if (v[i].call == GA_OUTLIER_PAIR_DIFFERS && c > ddp_compute_ms(&all[j]))
            ga_findings_add(
                f, GA_SEV_WARN, "DDP_PEERS_DIFFER",
                strcmp(all[i].hdr.host, all[j].hdr.host) == 0
                    ? (ga_where){all[i].hdr.host, all[i].hdr.node_index, -1, -1, NULL}
                    : GA_WHERE_CLUSTER,
                "the two ranks differ: rank %d on %s computes a step in %.3f ms%s, %.2fx rank %d on "
                "%s (%.3f ms), beyond --straggler %.0f%%; two cannot say which one is slow",
                all[i].hdr.world_rank, all[i].hdr.host, c, best, c / ddp_compute_ms(&all[j]),
                all[j].hdr.world_rank, all[j].hdr.host, ddp_compute_ms(&all[j]),
                100.0 * (o->straggler_ratio - 1));
    }
    free(v);
    return slow;
}

/* DDP_COMM_DOMINATES (ga_commshare.h): judged only when no rank computes slower than its peers. */
static void check_comm_share(const ddp_record *all, int n, ga_findings *f)
{
    double *wait = malloc((size_t)n * sizeof *wait), *step = malloc((size_t)n * sizeof *step);
    if (wait && step) {
        for (int i = 0; i < n; i++) {
            bool ok = all[i].hdr.status == GA_EXIT_PASS && all[i].timed_steps > 0;
            wait[i] = all[i].comm_wait_ms;
            step[i] = ok ? all[i].step_time_ms : 0;
        }
        ga_comm_verdict v;
        ga_comm_judge(wait, step, n, &v);
        const ddp_record *r = v.waited_for >= 0 ? &all[v.waited_for] : &all[0];
        ga_comm_add_finding(f, "DDP_COMM_DOMINATES", &v, where_rank(r), r->hdr.world_rank, r->hdr.host,
                            r->comm_wait_ms);
    }
    free(wait);
    free(step);
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

    if (!nonfinite && !(out->improvement >= o->min_improvement) && o->cut_short)
        ga_findings_add(f, GA_SEV_WARN, "DDP_LOSS_NOT_JUDGED", GA_WHERE_CLUSTER,
                        "the loss fell from %.6g to %.6g in %d steps, an improvement of %.1f%%, below "
                        "--min-improvement %.1f%%, but the time ran out before the steps asked: the bound is "
                        "for the whole run, not judged on a cut one (see not_covered)",
                        out->loss_start, out->loss_end, out->steps, 100.0 * out->improvement,
                        100.0 * o->min_improvement);
    else if (!nonfinite && !(out->improvement >= o->min_improvement))
        ga_findings_add(f, GA_SEV_FAIL, "DDP_LOSS_NOT_IMPROVED", GA_WHERE_CLUSTER,
                        "the loss fell from %.6g to %.6g in %d steps, an improvement of %.1f%%, below "
                        "--min-improvement %.1f%%",
                        out->loss_start, out->loss_end, out->steps, 100.0 * out->improvement,
                        100.0 * o->min_improvement);
    if (check_stragglers(all, n, o, f) == 0)
        check_comm_share(all, n, f);
}

void ddp_outcome_free(ddp_outcome *out)
{
    free(out->mismatched);
    out->mismatched = NULL;
}
