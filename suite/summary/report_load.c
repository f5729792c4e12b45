#include "report_load.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ga_str.h"
#include "outputs.h"
#include "report_check.h"
#include "summary_schema.h"
#include "suite_util.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The base name of path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int suite_report_file_check(const char *path, const json_t *j, char *err, size_t errlen)
{
    char why[400];
    if (suite_report_check(j, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    const char *name = base_name(path), *program = sj_str(j, "program", "");
    size_t pl = strlen(program);
    if (strncmp(name, program, pl) != 0 || strcmp(name + pl, ".json") != 0) {
        snprintf(err, errlen, "%s holds a report of %s: a report is named after its program (%s.json)", path,
                 program, program);
        return -1;
    }
    return 0;
}

/* The front-end's own files, by name: each must be what its name says, or the directory is refused (a report
 * renamed summary.json, or a summary renamed gemm_flops.json, must not drop out of the merge). 1 when name is
 * one of them and holds what it should, 0 when name is none of them, -1 with a message. */
static int front_end_file(const char *dir, const char *name, char *err, size_t errlen)
{
    char path[4096], why[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    bool summary = strcmp(name, "summary.json") == 0, run = strcmp(name, "suite_run.json") == 0;
    bool k8s = strcmp(name, SUITE_HANDOFF_K8S_JSON) == 0;
    if (!summary && !run && !k8s)
        return 0;
    json_t *j = k8s ? suite_load_json_array(path, why, sizeof why) : suite_load_json(path, why, sizeof why);
    int rc = j ? 1 : -1;
    if (summary && j &&
        (!ga_streq(sj_str(j, "schema", NULL), SUITE_SUMMARY_SCHEMA) ||
         !json_is_integer(json_object_get(j, "schema_version")) ||
         sj_int(j, "schema_version", 0) != SUITE_SUMMARY_SCHEMA_VERSION)) {
        snprintf(why, sizeof why, "%s: not a version %d %s", path, SUITE_SUMMARY_SCHEMA_VERSION,
                 SUITE_SUMMARY_SCHEMA);
        rc = -1;
    } else if (run && j) {
        char rwhy[400];
        if (suite_run_check(j, rwhy, sizeof rwhy) != 0) {
            snprintf(why, sizeof why, "%s: %s", path, rwhy);
            rc = -1;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    json_decref(j);
    return rc;
}

/* The checks across the reports of one run: one report per program, one cluster. */
static int check_set(const json_t *reports, const json_t *names, char *err, size_t errlen)
{
    size_t i, j;
    json_t *a, *b;
    json_array_foreach(reports, i, a)
        for (j = 0; j < i; j++) {
            b = json_array_get(reports, j);
            const char *fa = json_string_value(json_array_get(names, i)),
                       *fb = json_string_value(json_array_get(names, j));
            if (ga_streq(sj_str(a, "program", ""), sj_str(b, "program", ""))) {
                snprintf(err, errlen, "%s and %s are both %s reports of run %s: remove the one that is not",
                         fb, fa, sj_str(a, "program", ""), sj_str(a, "run_id", ""));
                return -1;
            }
            if (sj_int(a, "node_count", 0) != sj_int(b, "node_count", 0)) {
                snprintf(err, errlen, "%s covers %lld nodes and %s %lld: reports of different clusters", fb,
                         sj_int(b, "node_count", 0), fa, sj_int(a, "node_count", 0));
                return -1;
            }
        }
    return 0;
}

/* The names of dir's *.json files, sorted (*n of them); NULL with err when dir cannot be read or memory runs
 * out (n == 0 returns an empty list). Free with free_names. */
static char **json_names(const char *dir, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot read report directory %s", dir);
        return NULL;
    }
    size_t cap = 64;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    bool oom = !names;
    *n = 0;
    while (!oom && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap *= 2;
            char **grown = cap <= 1 << 20 ? realloc(names, cap * sizeof *names) : NULL;
            if (!grown) {
                oom = true;
                break;
            }
            names = grown;
        }
        oom = !(names[*n] = strdup(e->d_name));
        *n += !oom;
    }
    closedir(d);
    if (oom) {
        for (size_t i = 0; names && i < *n; i++)
            free(names[i]);
        free(names);
        snprintf(err, errlen, "out of memory listing %s", dir);
        return NULL;
    }
    qsort(names, *n, sizeof names[0], cmp_str);
    return names;
}

/* Every *.json is, by its name and content together, one of the front-end's own files (*own set, NULL
 * returned) or the report of the program it is named after (returned); anything else stops the merge (NULL
 * with err; docs/suite.md, "gpuaccept merge"). */
static json_t *load_report_file(const char *dir, const char *name, bool *own, char *err, size_t errlen)
{
    char path[4096], lerr[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int kind = front_end_file(dir, name, lerr, sizeof lerr);
    *own = kind == 1;
    if (*own)
        return NULL;
    json_t *j = kind < 0 ? NULL : suite_load_json(path, lerr, sizeof lerr);
    char why[700];
    if (j && suite_report_file_check(path, j, why, sizeof why) != 0) {
        snprintf(lerr, sizeof lerr, "%s", why);
        json_decref(j);
        j = NULL;
    }
    if (!j)
        snprintf(err, errlen, "cannot trust %s", lerr);
    return j;
}

json_t *suite_load_reports(const char *dir, const char *run_id, char *err, size_t errlen)
{
    size_t n = 0;
    char **names = json_names(dir, &n, err, errlen);
    if (!names)
        return NULL;
    json_t *reports = json_array(), *files = json_array();
    for (size_t i = 0; i < n && reports; i++) {
        bool own = false;
        json_t *j = load_report_file(dir, names[i], &own, err, errlen);
        if (own)
            continue;
        if (!j) {
            json_decref(reports);
            reports = NULL;
            break;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        const char *id = sj_str(j, "run_id", "");
        if (run_id && !ga_streq(id, run_id)) {
            fprintf(stderr, "[SUITE] ignoring %s: a report of run %s, not of this run %s\n", path, id,
                    run_id);
        } else if (!run_id && json_array_size(reports) > 0 &&
                   !ga_streq(id, sj_str(json_array_get(reports, 0), "run_id", ""))) {
            snprintf(err, errlen,
                     "%s/%s is of run %s and %s of run %s: the directory mixes runs; merge one run's reports "
                     "(move the others away)",
                     dir, json_string_value(json_array_get(files, 0)),
                     sj_str(json_array_get(reports, 0), "run_id", ""), path, id);
            json_decref(reports);
            reports = NULL;
        } else {
            json_array_append(reports, j);
            json_array_append_new(files, json_string(path));
        }
        json_decref(j);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (reports && check_set(reports, files, err, errlen) != 0) {
        json_decref(reports);
        reports = NULL;
    }
    json_decref(files);
    return reports;
}

int suite_load_run_dir(const char *dir, json_t **reports, json_t **run, char *err, size_t errlen)
{
    /* suite_run.json, when there is one, says how each step ended and which run this is: it must be read
     * in full, or the verdict of a step that crashed would silently become its report's. */
    char path[4096], lerr[512], why[400];
    snprintf(path, sizeof path, "%s/suite_run.json", dir);
    struct stat st;
    *reports = *run = NULL;
    if (lstat(path, &st) == 0) {
        *run = suite_load_json(path, lerr, sizeof lerr);
        if (*run && suite_run_check(*run, why, sizeof why) != 0) {
            snprintf(lerr, sizeof lerr, "%s: %s", path, why);
            json_decref(*run);
            *run = NULL;
        }
        if (!*run) {
            snprintf(err, errlen, "cannot trust %s", lerr);
            return -1;
        }
    }
    *reports = suite_load_reports(dir, *run ? sj_str(*run, "run_id", NULL) : NULL, err, errlen);
    if (!*reports) {
        json_decref(*run);
        *run = NULL;
        return -1;
    }
    return 0;
}
