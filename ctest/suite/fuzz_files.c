/* The fuzzer's rounds on the other files gpuaccept reads (issue 27): baselines (--baseline), profiles
 * (--profile FILE), hostfiles (--hostfile), and two runs handed to compare. Each round mutates a real seed
 * (a shipped baseline or one made from a merged summary, a built-in profile, a hostfile), sometimes in the
 * ways issue 27 found passing (another schema_version, a figure given twice, a key given twice, a step option
 * the run owns, a slots= mpirun cannot read, a metric key given twice to hide a regression), and checks what
 * the loaders accept against rules restated here, not borrowed from the code under test. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "compare.h"
#include "fuzz.h"
#include "hostfile.h"
#include "merge.h"
#include "profile.h"
#include "suite_util.h"

char *duplicate_key(const char *text, const char *member)
{
    const char *brace = strchr(text, '{');
    if (!brace)
        return strdup(text);
    size_t head = (size_t)(brace - text) + 1, len = strlen(text), ml = strlen(member);
    char *out = malloc(len + ml + 2);
    if (!out)
        return NULL;
    memcpy(out, text, head);
    memcpy(out + head, member, ml);
    out[head + ml] = ',';
    memcpy(out + head + ml + 1, text + head, len - head + 1);
    return out;
}

/* A schema_version that is not the integer 1. */
static json_t *wrong_version(void)
{
    switch (below(6)) {
    case 0:
        return json_integer(0);
    case 1:
        return json_integer(2);
    case 2:
        return json_integer(99);
    case 3:
        return json_string("1");
    case 4:
        return json_real(1.5);
    default:
        return json_real(1.0);
    }
}

/* j written to path after one mutation: the tree's, a wrong version, a member of list given twice (dup,
 * appended to the array at key), a key given twice in the text, or bytes. 0, or -1. */
static int write_mutated(json_t *j, const char *path, const char *dup_array)
{
    int how = (int)below(5);
    if (how == 0)
        mutate_tree(j);
    else if (how == 1)
        json_object_set_new(j, "schema_version", wrong_version());
    else if (how == 2 && json_array_size(json_object_get(j, dup_array)) > 0) {
        json_t *arr = json_object_get(j, dup_array);
        json_array_append_new(arr, json_deep_copy(json_array_get(arr, below(json_array_size(arr)))));
    }
    char *text = json_dumps(j, JSON_COMPACT);
    if (!text)
        return -1;
    char *edited =
        how == 3 ? duplicate_key(text, below(2) ? "\"schema_version\":1" : "\"name\":\"x\"") : NULL;
    if (edited) {
        free(text);
        text = edited;
    }
    size_t len = strlen(text), cap = len + 16;
    if (how == 4) {
        char *grown = realloc(text, cap);
        if (!grown) {
            free(text);
            return -1;
        }
        text = grown;
        len = mutate_bytes(text, len, cap);
    }
    int rc = write_file(path, text, len);
    free(text);
    return rc;
}

static bool version_is_one(const json_t *j)
{
    json_t *v = json_object_get(j, "schema_version");
    return json_is_integer(v) && json_integer_value(v) == 1;
}

/* The rule restated: no two metrics of a baseline are the same figure. */
static bool figures_unique(const json_t *b)
{
    const json_t *m = json_object_get(b, "metrics");
    static const char *const same[] = {"program", "name", "scope", "world_size", "node_count"};
    for (size_t i = 0; i < json_array_size(m); i++)
        for (size_t j = 0; j < i; j++) {
            bool equal = true;
            for (size_t k = 0; k < 5 && equal; k++) {
                json_t *a = json_object_get(json_array_get(m, i), same[k]);
                json_t *b2 = json_object_get(json_array_get(m, j), same[k]);
                equal = (!a && !b2) || (a && b2 && json_equal(a, b2));
            }
            if (equal)
                return false;
        }
    return true;
}

/* A seed baseline: a shipped one, or one made from the merged seed summary. */
static json_t *seed_baseline(const char *dir, const json_t *seed_summary)
{
    char names[8][256], path[4400], err[512];
    size_t n = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < 8)
        if (strstr(e->d_name, ".json"))
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    if (d)
        closedir(d);
    size_t pick = below(n + 1);
    if (pick == n)
        return suite_baseline_from_summary(seed_summary, -1, 1, err, sizeof err);
    snprintf(path, sizeof path, "%s/%s", dir, names[pick]);
    return suite_load_json(path, err, sizeof err);
}

int baseline_round(const char *work, const char *baselines_dir, const json_t *seed_summary, counts *c)
{
    char path[4200], err[512];
    json_t *b = seed_baseline(baselines_dir, seed_summary);
    if (!b)
        return -1;
    snprintf(path, sizeof path, "%s/baseline.json", work);
    int rc = write_mutated(b, path, "metrics");
    json_decref(b);
    if (rc != 0)
        return -1;
    c->baseline_rounds++;
    json_t *loaded = suite_load_json(path, err, sizeof err);
    if (loaded && suite_baseline_validate(loaded, err, sizeof err) == 0) {
        c->baseline_taken++;
        if (!version_is_one(loaded) || !figures_unique(loaded)) {
            fprintf(stderr,
                    "FAIL: a baseline of another schema_version, or with a figure twice, was taken\n");
            c->passed_broken++;
        }
        json_t *copy = json_deep_copy(seed_summary);
        suite_baseline_apply(copy, loaded, path, -1);
        suite_summary_finalize(copy);
        json_decref(copy);
    }
    json_decref(loaded);
    return 0;
}

/* The rule restated: no argument sets --report-dir, --run-id or --timeout (or a prefix getopt would take). */
static bool sets_owned_option(const char *arg)
{
    static const char *const owned[] = {"report-dir", "run-id", "timeout"};
    if (strncmp(arg, "--", 2) != 0)
        return false;
    size_t n = strcspn(arg + 2, "=");
    for (size_t i = 0; n && i < 3; i++)
        if (n <= strlen(owned[i]) && strncmp(arg + 2, owned[i], n) == 0)
            return true;
    return false;
}

int profile_round(const char *work, counts *c)
{
    static const char *const names[] = {"quick", "standard", "full"};
    static const char *const owned[] = {"--report-dir", "--run-id=x", "--timeout", "--time=5", "--rep"};
    json_error_t je;
    json_t *p = json_loads(suite_profile_builtin(names[below(3)]), 0, &je);
    if (!p)
        return -1;
    if (below(4) == 0) { /* a step option the run owns, in some program's arguments */
        json_t *steps = json_object_get(p, "steps");
        void *it = json_object_iter(steps);
        for (size_t k = below(json_object_size(steps)); k > 0 && it; k--)
            it = json_object_iter_next(steps, it);
        if (it)
            json_array_append_new(json_object_iter_value(it), json_string(owned[below(5)]));
    }
    char path[4200], source[4200], err[1024];
    snprintf(path, sizeof path, "%s/profile.json", work);
    int rc = write_mutated(p, path, "not_covered");
    json_decref(p);
    if (rc != 0)
        return -1;
    c->profile_rounds++;
    json_t *loaded = NULL;
    if (suite_profile_load(path, &loaded, source, sizeof source, err, sizeof err) != 0)
        return 0;
    c->profile_taken++;
    bool owned_set = false;
    const char *prog;
    json_t *args;
    json_object_foreach(json_object_get(loaded, "steps"), prog, args) {
        size_t i;
        json_t *a;
        json_array_foreach(args, i, a)
            owned_set |= sets_owned_option(json_string_value(a));
        suite_profile_env env = {.expect_gpus = 8, .tolerance_pct = -1, .burn_s = 60, .gpu = below(2) != 0};
        json_t *out = json_array(), *nc = json_array();
        suite_profile_args(loaded, prog, &env, out, nc);
        json_decref(out);
        json_decref(nc);
    }
    if (!version_is_one(loaded) || owned_set) {
        fprintf(
            stderr,
            "FAIL: a profile of another schema_version or setting a step option the run owns was taken\n");
        c->passed_broken++;
    }
    json_decref(loaded);
    return 0;
}

/* Lines a hostfile mutation may add: shapes mpirun cannot read, or that are no node name. */
static const char *const hostfile_lines[] = {"node04 slots=2 max_slots=x",
                                             "node05 slots=0",
                                             "node06 slots=",
                                             "-np 4",
                                             "--host=evil",
                                             "../../etc/passwd slots=1",
                                             "user@node07",
                                             "node08 slots=4 max_slots=2",
                                             "node09 slots=2 slots=3",
                                             "+n0",
                                             "^node10",
                                             "node11 cpu=4",
                                             "node12 username=root",
                                             "node17 username=-oProxyCommand=x",
                                             "node13\tslots=2",
                                             "node14 slots=99999999",
                                             "node15 max-slots=8 count=2",
                                             "n\x1b[1m slots=1",
                                             "node16 slots=2 # a comment"};

/* The rule restated, on a line as read: a node name, then only slots-like and max-slots-like words with a
 * whole number of at least 1, max not below slots. */
static bool line_ok(const char *line)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    char *save = NULL, *w = strtok_r(buf, " \t", &save);
    if (!w || !isalnum((unsigned char)w[0]))
        return false;
    for (const char *p = w; *p; p++)
        if (!(isalnum((unsigned char)*p) || strchr("._-", *p)))
            return false;
    long slots = 0, max = 0;
    while ((w = strtok_r(NULL, " \t", &save)) != NULL) {
        char *eq = strchr(w, '='), *end;
        if (!eq)
            return false;
        if (strncmp(w, "user", 4) == 0 && isalnum((unsigned char)eq[1]))
            continue; /* username=NAME */
        long v = strtol(eq + 1, &end, 10);
        bool is_max = strstr(w, "max") != NULL && strstr(w, "max") < eq;
        if (*end || end == eq + 1 || v < 1)
            return false;
        *(is_max ? &max : &slots) = v;
    }
    return !max || slots <= max;
}

int hostfile_round(const char *work, counts *c)
{
    char text[2048] = "node01 slots=2\nnode02 slots=2 max_slots=4\n# a comment\nnode-03.example.com\n";
    for (int k = (int)below(3); k > 0; k--) {
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s\n",
                 hostfile_lines[below(sizeof hostfile_lines / sizeof *hostfile_lines)]);
    }
    size_t len = strlen(text);
    if (below(3) == 0)
        len = mutate_bytes(text, len, sizeof text);
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/hostfile", work);
    if (write_file(path, text, len) != 0)
        return -1;
    c->hostfile_rounds++;
    suite_hostlist *hosts = malloc(sizeof *hosts);
    if (!hosts)
        return -1;
    if (suite_hostfile_read(path, hosts, err, sizeof err) == 0) {
        c->hostfile_taken++;
        for (size_t i = 0; i < hosts->n; i++)
            if (!line_ok(hosts->host[i].line)) {
                fprintf(stderr, "FAIL: hostfile line '%s' was taken\n", hosts->host[i].line);
                c->passed_broken++;
            }
    }
    free(hosts);
    return 0;
}

/* A metric with a numeric value of a summary, chosen at random, or NULL. */
static json_t *numeric_metric(json_t *metrics)
{
    size_t n = json_array_size(metrics);
    for (size_t tries = 0; tries < 32 && n; tries++) {
        json_t *m = json_array_get(metrics, below(n));
        if (json_is_number(json_object_get(m, "value")) && json_number_value(json_object_get(m, "value")) > 0)
            return m;
    }
    return NULL;
}

int compare_round(const json_t *seed_summary, counts *c)
{
    /* NEW regressed on one metric by half, and carries a second copy of that metric with the old value
     * somewhere in its list (issue 27 item 6): compare must see the regression or refuse the file. */
    json_t *old_run = json_deep_copy(seed_summary), *new_run = json_deep_copy(seed_summary);
    json_t *metrics = json_object_get(new_run, "metrics");
    json_t *m = numeric_metric(metrics);
    if (!m) {
        json_decref(old_run);
        json_decref(new_run);
        return -1;
    }
    json_t *intact = json_deep_copy(m);
    double v = json_number_value(json_object_get(m, "value"));
    bool hib = json_is_true(json_object_get(m, "higher_is_better"));
    json_object_set_new(m, "value", json_real(hib ? v / 2 : v * 2));
    json_array_insert_new(metrics, below(json_array_size(metrics) + 1), intact);
    if (below(3) == 0) /* the other way: OLD has the metric twice */
        json_array_append_new(json_object_get(old_run, "metrics"), json_deep_copy(intact));
    char err[512];
    json_t *cmp =
        suite_compare(old_run, new_run, 10, true, err, sizeof err); /* --force: comparability aside */
    c->compare_rounds++;
    if (!cmp)
        c->compare_refused++;
    else if (json_integer_value(json_object_get(cmp, "regressions")) == 0 &&
             json_integer_value(json_object_get(cmp, "missing_in_new")) == 0) {
        fprintf(stderr, "FAIL: compare found no regression behind a metric given twice\n");
        c->passed_broken++;
    }
    json_decref(cmp);
    json_decref(old_run);
    json_decref(new_run);
    return 0;
}
