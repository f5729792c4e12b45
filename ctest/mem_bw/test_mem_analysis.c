/* mem_bw analysis on synthetic clusters: peaks per test, one slow GPU among 64 x 8, the host path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mb_analysis.h"
#include "ga_peaks.h"
#include "ga_test.h"

static void measured(mb_result *x, double GBps)
{
    *x = (mb_result){.state = MB_MEASURED,
                     .bytes = 1e9,
                     .reps = 20,
                     .best_s = 1.0 / GBps,
                     .median_s = 1.0 / GBps,
                     .GBps = GBps,
                     .median_GBps = GBps,
                     .check_ok = 1};
}

static mb_record *cluster(int nodes, int gpus, const char *model, bool gpu)
{
    int n = nodes * gpus;
    mb_record *all = calloc((size_t)n, sizeof *all);
    for (int i = 0; i < n; i++) {
        mb_record *r = &all[i];
        snprintf(r->hdr.host, sizeof r->hdr.host, "node%03d", i / gpus);
        r->hdr.world_rank = i;
        r->hdr.node_index = i / gpus;
        r->hdr.device_index = gpu ? i % gpus : -1;
        snprintf(r->model, sizeof r->model, "%s", model);
        double jitter = 1.0 + 0.01 * sin(i * 7.1);
        if (gpu) {
            measured(&r->t[MB_DEVICE_COPY], 2900 * jitter);
            measured(&r->t[MB_DEVICE_RW], 3000 * jitter);
            measured(&r->t[MB_H2D], 53 * jitter);
            measured(&r->t[MB_D2H], 54 * jitter);
        } else {
            measured(&r->t[MB_HOST_TRIAD], 20 * jitter);
        }
    }
    return all;
}

static size_t count_code(const ga_findings *f, const char *code, int *rank, int *gpu)
{
    size_t c = 0;
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(f->items[i].code, code) == 0) {
            c++;
            *rank = f->items[i].world_rank;
            *gpu = f->items[i].gpu;
        }
    return c;
}

/* Every measurement is kept and the best counts; wrong data in any measurement stays wrong. */
static void test_result_add(void)
{
    mb_result r = {0}, a, b;
    measured(&a, 10);
    measured(&b, 14);
    b.check_ok = 0;
    mb_result_add(&r, &a);
    CHECK(r.measured == 1 && r.GBps == 10 && r.measurements[0] == 10);
    mb_result_add(&r, &b);
    CHECKF(r.measured == 2 && r.GBps == 14 && r.measurements[1] == 14 && !r.check_ok, "best 14, wrong kept");
    mb_result_add(&r, &a);
    CHECK(r.measured == 3 && r.GBps == 14 && r.measurements[2] == 10);
}

/* Two host ranks a third apart: neither is below the median (the median of two is their mean), a warning
 * names both. Three, the slow one is named. */
static void test_two_ranks(void)
{
    mb_record *all = cluster(1, 3, "AMD EPYC", false);
    all[1].t[MB_HOST_TRIAD].GBps = 13;
    mb_policy p = {0.10, 0, 0, false};
    ga_findings f;
    ga_findings_init(&f);
    json_t *report = json_object();
    mb_outcome out;
    mb_analyse(all, 2, &p, "host", report, &f, &out);
    int rank = -1, gpu = -1;
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 0 &&
               count_code(&f, "MEM_PEERS_DIFFER", &rank, &gpu) == 1,
           "two ranks: a warning, no failure");
    CHECK(ga_findings_exit_code(&f) == 0 && f.items[0].severity == GA_SEV_WARN);
    char why[256];
    CHECKF(mb_suspect_tests(all, 2, &p, why, sizeof why) == 1u << MB_HOST_TRIAD,
           "both are measured again (%s)", why);
    ga_findings_free(&f);
    json_decref(report);
    ga_findings_init(&f);
    report = json_object();
    mb_analyse(all, 3, &p, "host", report, &f, &out);
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 1 && rank == 1, "three ranks: rank 1 named");
    p.relative_warn = true;
    ga_findings_free(&f);
    ga_findings_init(&f);
    mb_analyse(all, 3, &p, "host", report, &f, &out);
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 1 && f.items[0].severity == GA_SEV_WARN &&
               ga_findings_exit_code(&f) == 0,
           "--relative warn: the same finding, a warning");
    ga_findings_free(&f);
    json_decref(report);
    free(all);
}

/* The screen: a rank more than the tolerance below the median is measured again even when the rule does not
 * name it (the noise of one pass is wide), so that the verdict rests on the best of N; within the tolerance,
 * not. */
static void test_screen(void)
{
    mb_record *all = cluster(1, 4, "AMD EPYC", false);
    double v[4] = {100, 120, 80, 92};
    for (int i = 0; i < 4; i++)
        all[i].t[MB_HOST_TRIAD].GBps = v[i];
    mb_policy p = {0.10, 0, 0, false};
    ga_findings f;
    ga_findings_init(&f);
    json_t *report = json_object();
    mb_outcome out;
    mb_analyse(all, 4, &p, "host", report, &f, &out);
    int rank = -1, gpu = -1;
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 0, "nobody named in this noise");
    /* rank 2, 20% below, inside noise wider than GA_OUTLIER_FAR allows: not judged, and a warning says so */
    CHECKF(count_code(&f, "MEM_TOO_NOISY", &rank, &gpu) == 1 && rank == 2 && f.count == 1,
           "rank 2 not covered");
    char why[256];
    CHECKF(mb_suspect_tests(all, 4, &p, why, sizeof why) == 1u << MB_HOST_TRIAD,
           "rank 2 is measured again (%s)", why);
    all[2].t[MB_HOST_TRIAD].GBps = 95;
    CHECKF(mb_suspect_tests(all, 4, &p, why, sizeof why) == 0, "all within 10%% of the median: nothing (%s)",
           why);
    ga_findings_free(&f);
    json_decref(report);
    free(all);
}

/* Issue 44: the false pass under load. 4 host ranks, rank 1 slowed 2x, each measured in three passes beside a
 * busy loop (healthy 16.5-21.0 GB/s, the slowed one 6.8-10.4): the repeats' noise alone would move the bound
 * to about 9.2 GB/s and pass rank 1 at 10.4 against a median of 21. The noise may widen the bound only to
 * GA_OUTLIER_FAR: rank 1, 2x below, is named. */
static void test_slow_under_noise(void)
{
    mb_record *all = cluster(1, 4, "AMD EPYC", false);
    const double passes[4][3] = {
        {21.0, 17.0, 19.5}, {10.4, 6.8, 8.6}, {18.0, 20.9, 16.5}, {16.6, 19.0, 21.0}};
    for (int i = 0; i < 4; i++) {
        mb_result *x = &all[i].t[MB_HOST_TRIAD];
        *x = (mb_result){0};
        for (int k = 0; k < 3; k++) {
            mb_result one;
            measured(&one, passes[i][k]);
            mb_result_add(x, &one);
        }
    }
    mb_policy p = {0.10, 0, 0, false};
    ga_findings f;
    ga_findings_init(&f);
    json_t *report = json_object();
    mb_outcome out;
    mb_analyse(all, 4, &p, "host", report, &f, &out);
    int rank = -1, gpu = -1;
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 1 && rank == 1, "the 2x slow rank named (%d)",
           rank);
    CHECKF(ga_findings_exit_code(&f) == 1, "the verdict fails");
    ga_findings_free(&f);
    json_decref(report);
    free(all);
}

int main(void)
{
    test_result_add();
    test_slow_under_noise();
    test_screen();
    test_two_ranks();
    mb_record *all = cluster(64, 8, "NVIDIA H100 80GB HBM3", true);
    CHECKF(mb_peak(&all[0], MB_DEVICE_COPY) == 3350, "HBM peak");
    CHECKF(fabs(mb_peak(&all[0], MB_H2D) - 63.015) < 0.01, "PCIe gen5 x16 peak");
    all[205].t[MB_H2D].GBps = 20; /* a GPU behind a link trained at x4 */
    mb_policy p = {0.10, 0.7, 0.7, false};
    ga_findings f;
    ga_findings_init(&f);
    json_t *report = json_object();
    mb_outcome out;
    mb_analyse(all, 512, &p, "cuda", report, &f, &out);
    int rank = -1, gpu = -1;
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 1 && rank == 205 && gpu == 5,
           "below median: rank %d GPU %d", rank, gpu);
    CHECKF(count_code(&f, "MEM_BELOW_PEAK", &rank, &gpu) == 1 && rank == 205, "below 70%% of the link: %d",
           rank);
    CHECKF(f.count == 2, "%zu findings", f.count);
    json_t *tests = json_object_get(json_object_get(report, "summary"), "tests");
    CHECKF(json_array_size(tests) == 4, "four GPU tests");
    json_t *h2d = json_array_get(tests, 2);
    CHECKF(strcmp(json_string_value(json_object_get(h2d, "test")), "h2d") == 0, "test order");
    CHECKF(json_array_size(json_object_get(h2d, "gpus")) == 512, "512 GPUs");
    json_t *copy = json_array_get(tests, 0);
    CHECKF(json_real_value(json_object_get(copy, "peak_GBps")) == 3350, "copy peak in summary");
    CHECKF(json_array_size(json_object_get(report, "metrics")) == 4 * 512, "metrics");
    CHECKF(out.n_tests == 4 && strcmp(out.tests[2].name, "h2d") == 0 && out.tests[2].measured == 512 &&
               out.tests[0].peak == 3350 && strcmp(out.tests[0].metric, "GBps_device_copy") == 0 &&
               fabs(out.tests[0].median - json_real_value(json_object_get(copy, "median_GBps"))) < 1e-9,
           "typed outcome agrees with the summary (%d tests)", out.n_tests);
    json_decref(report);
    ga_findings_free(&f);
    free(all);

    /* Issue 28 finding 3: the profiles derive --min-efficiency from the device copy (77.9 % on H100). Eight
     * healthy GPUs of a node sharing PCIe switches copy 26 GB/s each from the host, 41 % of the Gen5 x16 line
     * rate: the HBM floor must not hold them (it failed all 1024 host-link figures), a host floor of its own
     * may. */
    all = cluster(64, 8, "NVIDIA H100 80GB HBM3", true);
    for (int i = 0; i < 512; i++) {
        all[i].t[MB_H2D].GBps *= 26.0 / 53;
        all[i].t[MB_D2H].GBps *= 26.0 / 54;
    }
    mb_policy profile = {0.10, 0.779, 0, false};
    ga_findings_init(&f);
    report = json_object();
    mb_analyse(all, 512, &profile, "cuda", report, &f, &out);
    CHECKF(count_code(&f, "MEM_BELOW_PEAK", &rank, &gpu) == 0,
           "no host link held to the HBM floor: %zu findings", f.count);
    json_decref(report);
    ga_findings_free(&f);
    profile.min_host_efficiency = 0.5;
    ga_findings_init(&f);
    report = json_object();
    mb_analyse(all, 512, &profile, "cuda", report, &f, &out);
    CHECKF(count_code(&f, "MEM_BELOW_PEAK", &rank, &gpu) == 1024, "a host floor of 50 %% holds them: %zu",
           count_code(&f, "MEM_BELOW_PEAK", &rank, &gpu));
    json_decref(report);
    ga_findings_free(&f);
    free(all);

    /* Host path: no peak, no efficiency, one slow NUMA node flagged against the median. */
    all = cluster(4, 2, "AMD EPYC 9654", false);
    all[6].t[MB_HOST_TRIAD].GBps = 10;
    ga_findings_init(&f);
    report = json_object();
    mb_analyse(all, 8, &p, "host", report, &f, &out);
    CHECKF(out.n_tests == 1 && !out.tests[0].on_gpus && out.tests[0].peak < 0,
           "host outcome: ranks, no peak");
    CHECKF(count_code(&f, "MEM_BELOW_MEDIAN", &rank, &gpu) == 1 && rank == 6 && gpu == -1, "host: rank 6");
    tests = json_object_get(json_object_get(report, "summary"), "tests");
    CHECKF(json_array_size(tests) == 1, "host: one test");
    json_t *g0 = json_array_get(json_object_get(json_array_get(tests, 0), "gpus"), 0);
    CHECKF(json_is_null(json_object_get(g0, "efficiency")) && json_is_null(json_object_get(g0, "gpu")),
           "host: efficiency and gpu null");
    json_decref(report);
    ga_findings_free(&f);
    free(all);
    return ga_test_finish();
}
