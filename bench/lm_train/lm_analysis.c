/* lm_train's checks over the gathered records (lm_analysis.h). */
#include "lm_analysis.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_commshare.h"
#include "ga_exit.h"
#include "ga_outlier.h"
#include "ga_replicas.h"
#include "ga_stats.h"

void lm_params_digest(const float *params, size_t n, uint64_t *hash, double *sum, bool *finite)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *bytes = (const unsigned char *)params;
    for (size_t k = 0; k < n * sizeof(float); k++) {
        h ^= bytes[k];
        h *= 0x100000001b3ull;
    }
    double s = 0;
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        ok = ok && isfinite(params[k]);
        s += params[k];
    }
    *hash = h;
    *sum = s;
    *finite = ok;
}

int lm_loss_window(int steps)
{
    int w = steps / 10;
    return w < 1 ? 1 : w > 20 ? 20 : w;
}

double lm_mean(const double *curve, int from, int count)
{
    if (!curve || from < 0 || count < 1)
        return NAN;
    double s = 0;
    for (int k = 0; k < count; k++)
        s += curve[from + k];
    return s / count;
}

double lm_median_of(const double *v, int n)
{
    if (n < 1)
        return NAN;
    double *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return NAN;
    memcpy(copy, v, (size_t)n * sizeof *copy);
    double m = ga_median(copy, (size_t)n);
    free(copy);
    return m;
}

static ga_where where_rank(const lm_record *r)
{
    return ga_record_where(&r->hdr);
}

/* "GPU 0000:1b:00.0 (NVIDIA H100 80GB HBM3) of rank 3 on node7", or "rank 3 on node7" on the host path. */
static void name_rank(const lm_record *r, char *out, size_t len)
{
    if (r->hdr.device_index >= 0 && r->hdr.device_pci_bus_id[0])
        snprintf(out, len, "GPU %s (%s) of rank %d on %s", r->hdr.device_pci_bus_id, r->hdr.device_name,
                 r->hdr.world_rank, r->hdr.host);
    else
        snprintf(out, len, "rank %d on %s", r->hdr.world_rank, r->hdr.host);
}

/* The hash most ranks hold; a tie goes to the one the lowest rank holds (ga_replicas_majority: n log n, for
 * thousands of ranks); rank 0's when memory runs out. */
static int majority_rank(const lm_record *all, int n)
{
    return ga_replicas_majority_record(all, n, sizeof *all, offsetof(lm_record, param_hash));
}

static void check_replicas(const lm_record *all, int n, ga_findings *f, lm_outcome *out)
{
    int ref = majority_rank(all, n), sharing = 0;
    out->reference_rank = all[ref].hdr.world_rank;
    out->reference_hash = all[ref].param_hash;
    out->mismatched = calloc((size_t)n, sizeof *out->mismatched);
    for (int i = 0; i < n; i++)
        sharing += all[i].param_hash == all[ref].param_hash;
    for (int i = 0; i < n; i++) {
        if (all[i].param_hash == all[ref].param_hash)
            continue;
        if (out->mismatched)
            out->mismatched[out->n_mismatched] = all[i].hdr.world_rank;
        out->n_mismatched++;
        char who[256];
        name_rank(&all[i], who, sizeof who);
        ga_findings_add(f, GA_SEV_FAIL, "TRAIN_REPLICA_MISMATCH", where_rank(&all[i]),
                        "%s ends with different parameters (hash %016llx, sum %.9g) from rank %d (hash "
                        "%016llx, sum %.9g, shared by %d of %d ranks): the replicas diverged",
                        who, (unsigned long long)all[i].param_hash, all[i].param_sum, out->reference_rank,
                        (unsigned long long)all[ref].param_hash, all[ref].param_sum, sharing, n);
    }
    out->replicas_identical = out->n_mismatched == 0;
}

double lm_compute_ms(const lm_record *r)
{
    return r->compute_measured > 0 ? r->compute_ms : r->step_ms_median - r->comm_wait_ms;
}

void lm_add_compute(lm_record *r, double compute_ms)
{
    if (r->compute_measured < LM_MAX_MEASUREMENTS)
        r->compute_measurements[r->compute_measured] = compute_ms;
    if (r->compute_measured == 0 || compute_ms < r->compute_ms)
        r->compute_ms = compute_ms;
    r->compute_measured++;
}

/* The outlier rule over the ranks' compute times (lower is better), or NULL when the check is off, there are
 * fewer than two ranks, or memory runs out (free it). */
static ga_outlier_verdict *judge_compute(const lm_record *all, int n, const lm_check_opts *o)
{
    if (n < 2 || o->straggler_ratio <= 1)
        return NULL;
    double *c = malloc((size_t)n * sizeof *c);
    const double **lists = malloc((size_t)n * sizeof *lists);
    int *counts = malloc((size_t)n * sizeof *counts);
    ga_outlier_verdict *v = NULL;
    if (c && lists && counts) {
        for (int i = 0; i < n; i++) {
            c[i] = lm_compute_ms(&all[i]);
            lists[i] = all[i].compute_measurements;
            counts[i] =
                all[i].compute_measured < LM_MAX_MEASUREMENTS ? all[i].compute_measured : LM_MAX_MEASUREMENTS;
        }
        /* how much one rank's compute time moves between windows is noise too */
        v = ga_outlier_judge_repeated(c, lists, counts, n, o->straggler_ratio - 1, GA_LOWER_IS_BETTER);
    }
    free(c);
    free(lists);
    free(counts);
    return v;
}

bool lm_straggler_suspects(const lm_record *all, int n, const lm_check_opts *o, char *why, size_t why_len)
{
    ga_outlier_verdict *v = judge_compute(all, n, o);
    int first = -1, suspects = ga_outlier_suspects(v, n, &first);
    if (suspects && why_len)
        snprintf(why, why_len, "rank %d computes a step in %.3f ms, %.2fx the %s %.3f ms (%d suspect%s)",
                 all[first].hdr.world_rank, lm_compute_ms(&all[first]),
                 lm_compute_ms(&all[first]) / v[first].ref_median,
                 v[first].call == GA_OUTLIER_PAIR_DIFFERS ? "other rank's" : "median", v[first].ref_median,
                 suspects, suspects == 1 ? "" : "s");
    free(v);
    return suspects > 0;
}

static void straggler_finding(const lm_record *r, const ga_outlier_verdict *v, const lm_check_opts *o,
                              ga_findings *f)
{
    char who[256], best[32] = "";
    name_rank(r, who, sizeof who);
    if (r->compute_measured > 1)
        snprintf(best, sizeof best, " (best of %d)", r->compute_measured);
    double c = lm_compute_ms(r);
    ga_findings_add(f, GA_SEV_WARN, "TRAIN_STRAGGLER", where_rank(r),
                    "%s computes a training step in %.3f ms%s, %.2fx its peers' median %.3f ms and above "
                    "their bound %.3f ms (--straggler %.0f%%, their noise %.1f%%): it holds every step of "
                    "the job back",
                    who, c, best, c / v->ref_median, v->ref_median, v->bound,
                    100.0 * (o->straggler_ratio - 1), 100.0 * v->spread);
}

/* Adds TRAIN_STRAGGLER (returns how many) and TRAIN_PEERS_DIFFER (*differ: how many). */
static int check_stragglers(const lm_record *all, int n, const lm_check_opts *o, ga_findings *f, int *differ)
{
    ga_outlier_verdict *v = judge_compute(all, n, o);
    int named = 0;
    *differ = 0;
    for (int i = 0; v && i < n; i++) {
        *differ += v[i].call == GA_OUTLIER_PAIR_DIFFERS;
        if (v[i].call == GA_OUTLIER_WORSE) {
            straggler_finding(&all[i], &v[i], o, f);
            named++;
        }
        int j = v[i].other;
        double c = lm_compute_ms(&all[i]);
        if (v[i].call == GA_OUTLIER_PAIR_DIFFERS && c > lm_compute_ms(&all[j]))
            ga_findings_add(
                f, GA_SEV_WARN, "TRAIN_PEERS_DIFFER", GA_WHERE_CLUSTER,
                "the two ranks differ: rank %d on %s computes a step in %.3f ms, %.2fx rank %d on "
                "%s (%.3f ms), beyond --straggler %.0f%%; two cannot say which one is slow",
                all[i].hdr.world_rank, all[i].hdr.host, c, c / lm_compute_ms(&all[j]), all[j].hdr.world_rank,
                all[j].hdr.host, lm_compute_ms(&all[j]), 100.0 * (o->straggler_ratio - 1));
    }
    free(v);
    return named;
}

/* TRAIN_COMM_DOMINATES (ga_commshare.h), over each rank's mean wait and mean step of its timed steps. */
static void check_comm_share(const lm_record *all, int n, ga_findings *f)
{
    double *wait = malloc((size_t)n * sizeof *wait), *step = malloc((size_t)n * sizeof *step);
    if (wait && step) {
        for (int i = 0; i < n; i++) {
            bool ok = all[i].hdr.status == GA_EXIT_PASS && all[i].timed_steps > 0 && all[i].train_s > 0;
            wait[i] = all[i].comm_wait_ms;
            step[i] = ok ? 1e3 * all[i].train_s / all[i].timed_steps : 0;
        }
        ga_comm_verdict v;
        ga_comm_judge(wait, step, n, &v);
        const lm_record *r = v.waited_for >= 0 ? &all[v.waited_for] : &all[0];
        ga_comm_add_finding(f, "TRAIN_COMM_DOMINATES", &v, where_rank(r), r->hdr.world_rank, r->hdr.host,
                            r->comm_wait_ms);
    }
    free(wait);
    free(step);
}

/* The job's throughput, step times, memory and the peak the MFU is over. */
static void throughput(const lm_record *all, int n, const lm_check_opts *o, lm_outcome *out)
{
    double slowest = 0, frac = 0, peak = INFINITY;
    double *medians = malloc((size_t)n * sizeof *medians);
    for (int i = 0; i < n; i++) {
        slowest = fmax(slowest, all[i].train_s);
        out->step_ms_worst = fmax(out->step_ms_worst, all[i].step_ms_worst);
        out->bytes_used_max = fmax(out->bytes_used_max, all[i].bytes_used);
        frac += all[i].comm_fraction;
        peak = fmin(peak, all[i].peak_tflops);
        if (medians)
            medians[i] = all[i].step_ms_median;
    }
    out->step_ms_median = medians ? lm_median_of(medians, n) : NAN;
    free(medians);
    out->comm_fraction = frac / n;
    out->tokens_per_s = slowest > 0 ? (double)o->tokens_per_step * all[0].timed_steps / slowest : 0;
    out->tokens_per_s_per_gpu = out->tokens_per_s / n;
    out->peak_tflops = isfinite(peak) ? peak : 0;
    out->mfu = out->peak_tflops > 0
                   ? out->tokens_per_s_per_gpu * o->flops_per_token / (out->peak_tflops * 1e12)
                   : NAN;
}

/* The scaling phase: the median rank's tokens/s while its group trained alone, and the job's per GPU over it.
 */
static void scaling(const lm_record *all, int n, lm_outcome *out)
{
    out->single_tokens_per_s_per_gpu = out->scaling_efficiency = NAN;
    double *v = malloc((size_t)n * sizeof *v);
    int m = 0;
    for (int i = 0; v && i < n; i++)
        if (all[i].group_size > 0 && all[i].group_tokens_per_s > 0)
            v[m++] = all[i].group_tokens_per_s;
    if (m == n) {
        out->single_tokens_per_s_per_gpu = lm_median_of(v, m);
        out->scaling_efficiency = out->tokens_per_s_per_gpu / out->single_tokens_per_s_per_gpu;
    }
    free(v);
}

/* Below a floor that is only an estimate (a SKU figure not yet measured on that GPU) is a warning: an
 * unmeasured figure cannot fail a node. */
static void check_floors(const lm_check_opts *o, ga_findings *f, const lm_outcome *out, const lm_record *r0)
{
    ga_severity sev = o->floors_estimated ? GA_SEV_WARN : GA_SEV_FAIL;
    const char *basis = o->floors_estimated ? " (an estimate, not measured)" : "";
    if (o->min_mfu > 0 && out->peak_tflops > 0 && !(out->mfu >= o->min_mfu))
        ga_findings_add(f, sev, "TRAIN_MFU_LOW", GA_WHERE_CLUSTER,
                        "the job trains at %.1f%% MFU (%.0f tokens/s per GPU x %.4g FLOPs per token over the "
                        "dense bf16 peak %.1f TFLOP/s), below --min-mfu %.1f%%%s",
                        100.0 * out->mfu, out->tokens_per_s_per_gpu, o->flops_per_token, out->peak_tflops,
                        100.0 * o->min_mfu, basis);
    if (o->min_tokens_per_gpu > 0 && !(out->tokens_per_s_per_gpu >= o->min_tokens_per_gpu))
        ga_findings_add(
            f, sev, "TRAIN_THROUGHPUT_LOW", GA_WHERE_CLUSTER,
            "the job trains %.0f tokens/s per GPU (%.0f for its %d ranks), below "
            "--min-tokens-per-s %.0f%s",
            out->tokens_per_s_per_gpu, out->tokens_per_s,
            out->tokens_per_s_per_gpu > 0 ? (int)lround(out->tokens_per_s / out->tokens_per_s_per_gpu) : 0,
            o->min_tokens_per_gpu, basis);
    if (o->min_scaling > 0 && isfinite(out->scaling_efficiency) && out->scaling_efficiency < o->min_scaling)
        ga_findings_add(f, GA_SEV_FAIL, "TRAIN_SCALING_LOW", GA_WHERE_CLUSTER,
                        "the whole job trains at %.0f tokens/s per GPU, %.1f%% of the %.0f a group of %d "
                        "rank%s reaches alone, below --min-scaling %.1f%%",
                        out->tokens_per_s_per_gpu, 100.0 * out->scaling_efficiency,
                        out->single_tokens_per_s_per_gpu, r0->group_size, r0->group_size == 1 ? "" : "s",
                        100.0 * o->min_scaling);
}

static bool check_finite(const lm_record *all, int n, ga_findings *f)
{
    bool nonfinite = all[0].nonfinite_step >= 0;
    if (nonfinite)
        ga_findings_add(f, GA_SEV_FAIL, "TRAIN_NONFINITE", GA_WHERE_CLUSTER,
                        "the global loss became NaN or Inf at step %d: training diverged (lower --lr) or a "
                        "rank computed garbage",
                        all[0].nonfinite_step + 1);
    for (int i = 0; i < n; i++)
        if (!all[i].params_finite) {
            nonfinite = true;
            ga_findings_add(f, GA_SEV_FAIL, "TRAIN_NONFINITE", where_rank(&all[i]),
                            "rank %d on %s holds NaN or Inf parameters after training", all[i].hdr.world_rank,
                            all[i].hdr.host);
        }
    return nonfinite;
}

void lm_analyse(const lm_record *all, int n, const lm_check_opts *o, ga_findings *f, lm_outcome *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return;
    const lm_record *r0 = &all[0];
    out->steps = r0->steps_done;
    out->timed_steps = r0->timed_steps;
    out->loss_start = r0->loss_start;
    out->loss_end = r0->loss_end;
    double gap = r0->loss_start - o->loss_floor;
    out->improvement = gap > 0 ? (r0->loss_start - r0->loss_end) / gap : NAN;
    for (int i = 0; i < n; i++)
        if (all[i].hdr.status != GA_EXIT_PASS)
            ga_findings_add(f, GA_SEV_FAIL, "TRAIN_RANK_FAILED", where_rank(&all[i]), "rank %d on %s: %s",
                            all[i].hdr.world_rank, all[i].hdr.host, all[i].hdr.message);
    throughput(all, n, o, out);
    scaling(all, n, out);
    bool nonfinite = check_finite(all, n, f);
    check_replicas(all, n, f, out);
    bool low = !nonfinite && o->min_improvement > 0 && !(out->improvement >= o->min_improvement);
    if (low && o->cut_short)
        ga_findings_add(f, GA_SEV_WARN, "TRAIN_LOSS_NOT_JUDGED", GA_WHERE_CLUSTER,
                        "the loss fell from %.4f to %.4f in %d steps, %.1f%% of the way to its floor %.4f, "
                        "below --min-improvement %.1f%%, but the time ran out before the steps asked: the "
                        "bound is for the whole run, not judged on a cut one (see not_covered)",
                        out->loss_start, out->loss_end, out->steps, 100.0 * out->improvement, o->loss_floor,
                        100.0 * o->min_improvement);
    else if (low)
        ga_findings_add(f, GA_SEV_FAIL, "TRAIN_LOSS_NOT_IMPROVED", GA_WHERE_CLUSTER,
                        "the loss fell from %.4f to %.4f in %d steps, %.1f%% of the way to its floor %.4f "
                        "(ln V = %.4f at the start of an untrained model), below --min-improvement %.1f%%",
                        out->loss_start, out->loss_end, out->steps, 100.0 * out->improvement, o->loss_floor,
                        o->ln_vocab, 100.0 * o->min_improvement);
    check_floors(o, f, out, r0);
    int differ;
    out->n_stragglers = check_stragglers(all, n, o, f, &differ);
    /* judged only while every rank computes at its peers' pace: else the waits are the straggler's */
    if (out->n_stragglers == 0 && differ == 0)
        check_comm_share(all, n, f);
}

void lm_outcome_free(lm_outcome *out)
{
    free(out->mismatched);
    out->mismatched = NULL;
}
