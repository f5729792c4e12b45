/* Benchmark of the baseline check alone (issue 45, item 4): builds a baseline of N figures in memory (default
 * 100,000: distinct programs, names and job shapes, each with its source) and times suite_baseline_validate
 * on it, nothing else (no file read, no parse). Prints the figures and the check's wall time; exit 1 when the
 * check refuses the baseline. Not a test: a measurement to show, by hand. Goal: 100,000 figures in < 1 s.
 * Usage: build/launch/bench_baseline [N] [REPEATS]. */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "baseline.h"
#include "ga_time.h"

/* N figures, each unique by (program, name, scope, world_size, node_count), as a shipped baseline is. */
static json_t *make_baseline(long n)
{
    json_t *metrics = json_array();
    for (long i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "figure_%ld", i / 8);
        json_array_append_new(metrics,
                              json_pack("{s:s, s:s, s:f, s:s, s:b, s:s, s:s, s:b, s:i, s:i, s:f}", "program",
                                        i % 2 ? "gemm_flops" : "mem_bw", "name", name, "value", 100.0 + i % 7,
                                        "unit", "TFLOP/s", "higher_is_better", 1, "scope", "gpu", "source",
                                        "s1", "estimate", 0, "world_size", (int)(i / 2 % 4) + 1, "node_count",
                                        1, "tolerance_pct", 10.0));
    }
    return json_pack("{s:s, s:i, s:s, s:f, s:[{s:s, s:s}], s:o}", "schema", SUITE_BASELINE_SCHEMA,
                     "schema_version", SUITE_BASELINE_SCHEMA_VERSION, "model", "bench", "tolerance_pct", 10.0,
                     "sources", "id", "s1", "what", "generated", "metrics", metrics);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    json_t *b = make_baseline(n);
    if (!b) {
        fprintf(stderr, "bench_baseline: could not build the baseline\n");
        return 2;
    }
    int rc = 0;
    for (int r = 0; r < repeats && rc == 0; r++) {
        char err[512] = "";
        double t0 = ga_now();
        rc = suite_baseline_validate(b, err, sizeof err);
        double took = ga_now() - t0;
        printf("baseline check of %ld figures: %.3f s%s%s\n", n, took, rc ? ", refused: " : "",
               rc ? err : "");
    }
    json_decref(b);
    return rc ? 1 : 0;
}
