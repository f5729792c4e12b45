/* Profiles (launch/profile.c): the shell-like splitting of --args, and how placeholders are filled or left
 * out with the option before them and a reason. */
#include <jansson.h>

#include "../ga_test.h"
#include "profile.h"

/* The words of s joined with '|', or "ERR" when refused. */
static const char *split(const char *s)
{
    static char out[512];
    char err[256];
    json_t *w = json_array();
    if (suite_split_words(s, w, err, sizeof err) != 0) {
        json_decref(w);
        return "ERR";
    }
    out[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(w, i, v) {
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "|" : "", json_string_value(v));
    }
    json_decref(w);
    return out;
}

/* program's filled arguments joined with ' ', the not-covered lines joined with '|' in nc. */
static const char *args(const json_t *p, const char *program, const suite_profile_env *env, char *nc,
                        size_t len)
{
    static char out[512];
    json_t *a = json_array(), *n = json_array();
    out[0] = nc[0] = '\0';
    suite_profile_args(p, program, env, a, n);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", json_string_value(v));
    }
    json_array_foreach(n, i, v) {
        snprintf(nc + strlen(nc), len - strlen(nc), "%s%s", i ? "|" : "", json_string_value(v));
    }
    json_decref(a);
    json_decref(n);
    return out;
}

int main(void)
{
    CHECK_STR(split("  -b 8  -e 1G "), "-b|8|-e|1G");
    CHECK_STR(split("--tag 'a b' \"c \\\"d\\\" \\$x\" e\\ f"), "--tag|a b|c \"d\" $x|e f");
    CHECK_STR(split("''"), "");                       /* an empty word stays a word */
    CHECK_STR(split("$HOME `id` *"), "$HOME|`id`|*"); /* nothing is expanded */
    CHECK_STR(split("a'b'\"c\"d"), "abcd");
    CHECK_STR(split("'a"), "ERR");
    CHECK_STR(split("\"a"), "ERR");
    CHECK_STR(split("a\\"), "ERR");
    CHECK_STR(split(""), "");

    json_error_t je;
    json_t *p = json_loads("{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
                           " \"steps\": {\"env_audit\": [\"--expect-gpus\", \"{expect_gpus}\", \"-v\"],"
                           " \"allreduce_bw\": [\"--min-busbw\", \"{sku_min:allreduce_bw/busbw_at_max}\","
                           " \"-e\", \"{gpu:8G}\"],"
                           " \"mem_bw\": [\"--min-efficiency\", \"{sku_eff:mem_bw/GBps_device_copy}\"],"
                           " \"gemm_flops\": [\"--duration\", \"{burn_s}\"]}}",
                           0, &je);
    char err[256], nc[1024];
    CHECK(p && suite_profile_validate(p, err, sizeof err) == 0);
    json_t *b = json_loads("{\"tolerance_pct\": 10, \"metrics\": ["
                           "{\"program\": \"allreduce_bw\", \"name\": \"busbw_at_max\", \"value\": 400,"
                           " \"higher_is_better\": true, \"world_size\": 8, \"node_count\": 1},"
                           "{\"program\": \"mem_bw\", \"name\": \"GBps_device_copy\", \"value\": 3000,"
                           " \"higher_is_better\": true, \"peak\": 3600}]}",
                           0, &je);
    suite_profile_env env = {.expect_gpus = 8,
                             .baseline = b,
                             .tolerance_pct = -1,
                             .node_count = 1,
                             .world_size = 8,
                             .burn_s = 90,
                             .gpu = true};
    CHECK_STR(args(p, "env_audit", &env, nc, sizeof nc), "--expect-gpus 8 -v");
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "--min-busbw 360.0 -e 8G");
    CHECK_STR(nc, "");
    CHECK_STR(args(p, "mem_bw", &env, nc, sizeof nc), "--min-efficiency 75.0"); /* 3000 less 10% of 3600 */
    CHECK_STR(args(p, "gemm_flops", &env, nc, sizeof nc), "--duration 90");
    env.tolerance_pct = 20; /* --tolerance wins over the file's */
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "--min-busbw 320.0 -e 8G");

    /* What cannot be filled is left out with its option, and said. */
    env.node_count = 4;
    env.gpu = false;
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "");
    CHECK_STR(nc,
              "no --min-busbw for allreduce_bw: the baseline figure allreduce_bw/busbw_at_max holds for 1 "
              "node(s), this run has 4|no -e 8G for allreduce_bw: no GPU (host path)");
    env.expect_gpus = 0;
    env.expect_gpus_why = "no slots";
    CHECK_STR(args(p, "env_audit", &env, nc, sizeof nc), "-v");
    CHECK_STR(nc, "no --expect-gpus: no slots");
    env.baseline = NULL;
    env.no_baseline_why = "GPU model unknown";
    CHECK_STR(args(p, "mem_bw", &env, nc, sizeof nc), "");
    CHECK_STR(
        nc, "no SKU thresholds: GPU model unknown|relative only: mem_bw, each GPU against its peers with no "
            "floor (no SKU threshold)");
    json_t *none = json_array();
    CHECK(suite_profile_args(p, "ddp_smoke", &env, none, none) == -1 && json_array_size(none) == 0);
    json_decref(none);

    /* Refused shapes. */
    const char *bad[] = {
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": [\"{sku_min:}\"]}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": [\"{expect_gpus:3}\"]}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 2, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": []}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"\", \"steps\": "
        "{\"mem_bw\": []}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": []}, \"not_covered\": [1]}",
        NULL};
    for (const char **s = bad; *s; s++) {
        json_t *q = json_loads(*s, 0, &je);
        CHECKF(q && suite_profile_validate(q, err, sizeof err) != 0, "refused: %s", *s);
        json_decref(q);
    }
    for (const char *name = "quick"; name; name = name[0] == 'q'   ? "standard"
                                                  : name[0] == 's' ? "full"
                                                                   : NULL) {
        json_t *q = NULL;
        char src[64];
        CHECKF(suite_profile_load(name, &q, src, sizeof src, err, sizeof err) == 0, "built-in %s: %s", name,
               err);
        CHECK_STR(src, "built-in");
        json_decref(q);
    }
    json_decref(p);
    json_decref(b);
    return ga_test_finish();
}
