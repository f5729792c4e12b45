/* Fixture-driven tests of ddp_smoke's checks: each folder under fixtures/ describes a cluster (input.json:
 * nodes, ranks per node, the record every rank reports and the ranks that differ) and what the checks must
 * conclude (expected.json). A new case is a new folder. Usage: test_ddp_checks FIXTURE_DIR... */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp_checks.h"
#include "ga_exit.h"
#include "ga_test.h"

/* Applies the fields of o to a record; unknown fields are an error in the fixture. */
static int apply_fields(ddp_record *r, json_t *o)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        double d = json_number_value(v);
        if (strcmp(key, "rank") == 0)
            continue;
        else if (strcmp(key, "param_hash") == 0)
            r->param_hash = strtoull(json_string_value(v), NULL, 16);
        else if (strcmp(key, "param_sum") == 0)
            r->param_sum = d;
        else if (strcmp(key, "loss_start") == 0)
            r->loss_start = d;
        else if (strcmp(key, "loss_end") == 0)
            r->loss_end = d;
        else if (strcmp(key, "steps") == 0)
            r->steps_done = r->timed_steps = (int32_t)d;
        else if (strcmp(key, "nonfinite_step") == 0)
            r->nonfinite_step = (int32_t)d;
        else if (strcmp(key, "params_finite") == 0)
            r->params_finite = json_is_true(v);
        else if (strcmp(key, "train_s") == 0)
            r->train_s = d;
        else if (strcmp(key, "step_time_ms") == 0)
            r->step_time_ms = d;
        else if (strcmp(key, "comm_wait_ms") == 0)
            r->comm_wait_ms = d;
        else if (strcmp(key, "status") == 0)
            r->hdr.status = (int32_t)d;
        else {
            fprintf(stderr, "fixture: unknown record field '%s'\n", key);
            return -1;
        }
    }
    if (r->step_time_ms > 0)
        r->comm_fraction = r->comm_wait_ms / r->step_time_ms;
    return 0;
}

static json_t *load(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "%s: %s (line %d)\n", path, e.text, e.line);
    return j;
}

static int int_in(json_t *arr, int v)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x) if (json_integer_value(x) == v) return 1;
    return 0;
}

static void run_case(const char *dir)
{
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    json_t *in = load(dir, "input.json"), *want = load(dir, "expected.json");
    CHECKF(in && want, "%s: cannot load the fixture", name);
    if (!in || !want)
        return;
    int nodes = (int)json_integer_value(json_object_get(in, "nodes"));
    int per = (int)json_integer_value(json_object_get(in, "ranks_per_node"));
    int n = nodes * per;
    ddp_record *all = calloc((size_t)n, sizeof *all);
    for (int i = 0; i < n; i++) {
        ddp_record *r = &all[i];
        snprintf(r->hdr.host, sizeof r->hdr.host, "node%02d", i / per);
        r->hdr.world_rank = i;
        r->hdr.local_rank = i % per;
        r->hdr.local_size = per;
        r->hdr.node_index = i / per;
        r->hdr.device_index = i % per;
        r->nonfinite_step = -1;
        r->params_finite = 1;
        CHECKF(apply_fields(r, json_object_get(in, "every_rank")) == 0, "%s: bad every_rank", name);
    }
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(in, "overrides"), k, o)
    {
        int rank = (int)json_integer_value(json_object_get(o, "rank"));
        if (rank < 0 || rank >= n || apply_fields(&all[rank], o) != 0) {
            CHECKF(0, "bad override %zu", k);
            continue;
        }
    }
    ddp_check_opts opts = {json_number_value(json_object_get(in, "min_improvement")),
                           (int)json_integer_value(json_object_get(in, "global_batch")), 1.5};
    ga_findings f;
    ga_findings_init(&f);
    ddp_outcome out;
    ddp_analyse(all, n, &opts, &f, &out);

    int exit_code = ga_findings_exit_code(&f);
    CHECKF(exit_code == json_integer_value(json_object_get(want, "exit_code")), "exit code %d", exit_code);
    /* Every expected finding is there, on the expected ranks, and there is no other. */
    json_t *codes = json_object_get(want, "findings");
    size_t expected_total = 0;
    const char *code;
    json_t *ranks;
    json_object_foreach(codes, code, ranks)
    {
        size_t j;
        json_t *rk;
        expected_total += json_array_size(ranks);
        json_array_foreach(ranks, j, rk)
        {
            int rank = (int)json_integer_value(rk), found = 0;
            for (size_t i = 0; i < f.count; i++)
                found |= strcmp(f.items[i].code, code) == 0 && f.items[i].world_rank == rank &&
                         (rank < 0 || strcmp(f.items[i].host, all[rank].hdr.host) == 0);
            CHECKF(found, "no %s finding on rank %d", code, rank);
        }
    }
    CHECKF(f.count == expected_total, "%zu findings, expected %zu", f.count, expected_total);
    for (size_t i = 0; i < f.count; i++)
        if (!json_object_get(codes, f.items[i].code))
            CHECKF(0, "unexpected finding %s: %s", f.items[i].code, f.items[i].message);

    json_t *mism = json_object_get(want, "mismatched_ranks");
    CHECKF(out.n_mismatched == (int)json_array_size(mism), "%d mismatched ranks", out.n_mismatched);
    for (int i = 0; i < out.n_mismatched; i++)
        CHECKF(int_in(mism, out.mismatched[i]), "rank %d named as mismatched", out.mismatched[i]);
    CHECKF(out.replicas_identical == (out.n_mismatched == 0), "replicas_identical");
    json_t *sps = json_object_get(want, "samples_per_s");
    if (sps)
        CHECKF(fabs(out.samples_per_s - json_number_value(sps)) < 1e-6 * json_number_value(sps),
               "samples_per_s %g, expected %g", out.samples_per_s, json_number_value(sps));
    json_t *imp = json_object_get(want, "improvement");
    if (imp)
        CHECKF(fabs(out.improvement - json_number_value(imp)) < 1e-9, "improvement %g", out.improvement);

    ddp_outcome_free(&out);
    ga_findings_free(&f);
    free(all);
    json_decref(in);
    json_decref(want);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_ddp_checks FIXTURE_DIR...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        run_case(argv[i]);
    return ga_test_finish();
}
