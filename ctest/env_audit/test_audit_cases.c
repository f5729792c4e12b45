/* Data-driven tests of the consistency audit: each folder under audit_cases/ holds input.json (a cluster
 * described by defaults and per-node or per-rank overrides) and expected.json (the exit code, the exact set
 * of findings, and selected majority values). A new case is a new folder, not new code. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>

#include "env_consistency.h"
#include "ga_test.h"

static void set_field(env_record *r, const char *key, json_t *value)
{
    const char *s = json_string_value(value);
    for (int i = 0; i < ENV_V_COUNT; i++)
        if (strcmp(key, env_version_names[i]) == 0) {
            snprintf(r->versions[i].value, sizeof r->versions[i].value, "%s", s ? s : "");
            snprintf(r->versions[i].why, sizeof r->versions[i].why, "%s", s ? "" : "absent in fixture");
            return;
        }
    if (strcmp(key, "os") == 0)
        snprintf(r->os, sizeof r->os, "%s", s);
    else if (strcmp(key, "kernel") == 0)
        snprintf(r->kernel, sizeof r->kernel, "%s", s);
    else if (strcmp(key, "cpu_model") == 0)
        snprintf(r->cpu_model, sizeof r->cpu_model, "%s", s);
    else if (strcmp(key, "cores") == 0)
        r->cores = (int)json_integer_value(value);
    else if (strcmp(key, "numa_nodes") == 0)
        r->numa_nodes = (int)json_integer_value(value);
    else if (strcmp(key, "gpu_name") == 0)
        for (int g = 0; g < r->gpu_count; g++)
            snprintf(r->gpus[g].name, sizeof r->gpus[g].name, "%s", s);
    else if (strcmp(key, "gpu_count") == 0) {
        r->gpu_count = (int)json_integer_value(value);
        snprintf(r->gpu_why, sizeof r->gpu_why, "%s", r->gpu_count ? "" : "no CUDA device visible (fixture)");
    } else if (strcmp(key, "env") == 0) {
        const char *name;
        json_t *v;
        json_object_foreach(value, name, v)
        {
            int i = 0;
            while (i < r->var_count && strcmp(r->vars[i].name, name) != 0)
                i++;
            if (i == r->var_count && r->var_count < ENV_MAX_VARS)
                r->var_count++;
            snprintf(r->vars[i].name, sizeof r->vars[i].name, "%s", name);
            snprintf(r->vars[i].value, sizeof r->vars[i].value, "%s", json_string_value(v));
        }
    } else
        fprintf(stderr, "fixture: unknown field '%s'\n", key);
}

static void apply(env_record *r, json_t *fields)
{
    const char *key;
    json_t *value;
    json_object_foreach(fields, key, value) set_field(r, key, value);
}

/* One rank per GPU: local rank l sees GPU l of its node (as under CUDA_VISIBLE_DEVICES binding). */
static json_t *base_defaults; /* cluster_defaults.json: a healthy H100 node, which cases override */

static env_record *build_cluster(json_t *in, int *n_out)
{
    int nodes = (int)json_integer_value(json_object_get(in, "nodes"));
    int per_node = (int)json_integer_value(json_object_get(in, "ranks_per_node"));
    int n = nodes * per_node;
    env_record *recs = calloc((size_t)n, sizeof *recs);
    for (int i = 0; i < n; i++) {
        env_record *r = &recs[i];
        r->hdr.world_rank = i;
        r->hdr.node_index = i / per_node;
        r->hdr.local_rank = i % per_node;
        r->hdr.local_size = per_node;
        snprintf(r->hdr.host, sizeof r->hdr.host, "node%03d", r->hdr.node_index);
        r->gpu_count = 1;
        snprintf(r->gpus[0].uuid, sizeof r->gpus[0].uuid, "GPU-%03d-%d", r->hdr.node_index,
                 r->hdr.local_rank);
        apply(r, base_defaults);
        apply(r, json_object_get(in, "defaults"));
    }
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(in, "overrides"), k, o)
    {
        int node = (int)json_integer_value(json_object_get(o, "node"));
        json_t *local = json_object_get(o, "local_rank");
        for (int i = 0; i < n; i++)
            if (recs[i].hdr.node_index == node &&
                (!local || recs[i].hdr.local_rank == json_integer_value(local)))
                apply(&recs[i], json_object_get(o, "set"));
    }
    *n_out = n;
    return recs;
}

static bool finding_matches(const ga_finding *f, json_t *e)
{
    json_t *rank = json_object_get(e, "rank");
    return strcmp(f->code, json_string_value(json_object_get(e, "code"))) == 0 &&
           strcmp(f->host, json_string_value(json_object_get(e, "host"))) == 0 &&
           strcmp(ga_severity_name(f->severity), json_string_value(json_object_get(e, "severity"))) == 0 &&
           (!rank || f->world_rank == json_integer_value(rank));
}

static void run_case(const char *dir, const char *name)
{
    char path[1024];
    json_error_t err;
    snprintf(path, sizeof path, "%s/%s/input.json", dir, name);
    json_t *in = json_load_file(path, 0, &err);
    snprintf(path, sizeof path, "%s/%s/expected.json", dir, name);
    json_t *exp = json_load_file(path, 0, &err);
    CHECK(in && exp);
    if (!in || !exp) {
        fprintf(stderr, "%s: cannot load: %s\n", name, err.text);
        return;
    }
    int n = 0;
    env_record *recs = build_cluster(in, &n);
    env_audit_opts opts = {(int)json_integer_value(json_object_get(in, "expect_gpus"))};
    ga_findings f;
    ga_findings_init(&f);
    json_t *summary = env_audit_consistency(recs, n, &opts, &f);

    int failed_before = ga_test_failed;
    CHECK(ga_findings_exit_code(&f) == json_integer_value(json_object_get(exp, "exit_code")));
    json_t *want = json_object_get(exp, "findings");
    CHECK(f.count == json_array_size(want));
    size_t k;
    json_t *e;
    json_array_foreach(want, k, e)
    {
        bool found = false;
        for (size_t i = 0; i < f.count && !found; i++)
            found = finding_matches(&f.items[i], e);
        CHECK(found);
        if (!found)
            fprintf(stderr, "%s: expected finding %s on %s not produced\n", name,
                    json_string_value(json_object_get(e, "code")),
                    json_string_value(json_object_get(e, "host")));
    }
    const char *field;
    json_t *maj;
    json_object_foreach(json_object_get(exp, "majority"), field, maj)
    {
        json_t *entry;
        bool seen = false;
        json_array_foreach(summary, k,
                           entry) if (strcmp(json_string_value(json_object_get(entry, "field")), field) == 0)
        {
            seen = true;
            CHECK_STR(json_string_value(json_object_get(entry, "majority")), json_string_value(maj));
        }
        CHECK(seen);
    }
    if (ga_test_failed != failed_before)
        for (size_t i = 0; i < f.count; i++)
            fprintf(stderr, "%s: got %s %s on %s rank %d: %s\n", name, ga_severity_name(f.items[i].severity),
                    f.items[i].code, f.items[i].host, f.items[i].world_rank, f.items[i].message);
    printf("%s %s\n", ga_test_failed == failed_before ? "ok  " : "FAIL", name);
    json_decref(summary);
    ga_findings_free(&f);
    free(recs);
    json_decref(in);
    json_decref(exp);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASES_DIR DEFAULTS_JSON\n", argv[0]);
        return 2;
    }
    json_error_t err;
    base_defaults = json_load_file(argv[2], 0, &err);
    if (!base_defaults) {
        fprintf(stderr, "%s: %s\n", argv[2], err.text);
        return 2;
    }
    struct dirent **entries;
    int count = scandir(argv[1], &entries, NULL, alphasort);
    CHECK(count > 2);
    for (int i = 0; i < count; i++) {
        if (entries[i]->d_name[0] != '.')
            run_case(argv[1], entries[i]->d_name);
        free(entries[i]);
    }
    free(entries);
    json_decref(base_defaults);
    return ga_test_finish();
}
