/* A bounded, deterministic fuzzer of everything the front-end and ddp_smoke read from files people hand them:
 * reports and suite_run.json (merge), summaries (compare, baseline --from, the renderers), baselines
 * (--baseline) and IDX data sets. Built with ASan and UBSan (float-cast-overflow included) by
 * GPUACCEPT_SANITIZE=ON, so a crash, a leak or undefined behaviour stops it; its own oracle is that no
 * merge of inputs it cannot trust passes.
 *
 *     suite_fuzz CASES_DIR WORK_DIR SECONDS
 *
 * CASES_DIR: the generated merge fixtures (make_fixtures.py), whose real reports are the seeds. Each round
 * takes one case, mutates one of its files (bytes: flips, cuts, insertions; or structure: a value replaced by
 * an out-of-range number, another type, deep nesting, or a key removed) and feeds it to the same loading,
 * merging, rendering, comparing and baseline code the gpuaccept verbs run. Exit 0 with the counts, 1 when
 * the oracle failed. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "compare.h"
#include "ddp_data.h"
#include "fuzz.h"
#include "ga_str.h"
#include "merge.h"
#include "render.h"
#include "suite_util.h"
#include "report_load.h"

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

unsigned long long rnd(void)
{
    /* xorshift64*: the same sequence every run, so a failure is reproduced by running again. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* A value that a careless conversion would trip on. */
static json_t *weird_value(void)
{
    switch (below(14)) {
    case 0:
        return json_real(1e300);
    case 1:
        return json_real(-1e300);
    case 2:
        return json_integer(4294967296LL);
    case 3:
        return json_integer(-1);
    case 4:
        return json_integer(9223372036854775807LL);
    case 5:
        return json_real(9.3e18);
    case 6:
        return json_string("");
    case 7:
        return json_string("9999999999");
    case 8:
        return json_null();
    case 9:
        return json_true();
    case 10:
        return json_array();
    case 11:
        return json_object();
    case 12: {
        json_t *deep = json_array();
        for (int i = 0; i < 200; i++)
            deep = json_pack("[o]", deep);
        return deep;
    }
    default:
        return json_real(-0.0);
    }
}

/* Replaces (or removes) one randomly chosen value somewhere in j. */
void mutate_tree(json_t *j)
{
    json_t *cur = j;
    for (int depth = 0; depth < 8; depth++) {
        size_t n = json_is_object(cur)  ? json_object_size(cur)
                   : json_is_array(cur) ? json_array_size(cur)
                                        : 0;
        if (n == 0)
            return;
        size_t k = below(n);
        json_t *child;
        const char *key = NULL;
        if (json_is_object(cur)) {
            void *it = json_object_iter(cur);
            for (size_t i = 0; i < k; i++)
                it = json_object_iter_next(cur, it);
            key = json_object_iter_key(it);
            child = json_object_iter_value(it);
        } else {
            child = json_array_get(cur, k);
        }
        bool leaf = !(json_is_object(child) || json_is_array(child)) || below(4) == 0;
        if (leaf) {
            if (key && below(5) == 0)
                json_object_del(cur, key);
            else if (key)
                json_object_set_new(cur, key, weird_value());
            else
                json_array_set_new(cur, k, weird_value());
            return;
        }
        cur = child;
    }
}

/* Flips, cuts or inserts bytes of text (len bytes, buffer of cap). Returns the new length. */
size_t mutate_bytes(char *text, size_t len, size_t cap)
{
    int edits = 1 + (int)below(4);
    for (int e = 0; e < edits && len > 0; e++) {
        size_t at = below(len);
        switch (below(4)) {
        case 0:
            text[at] = (char)rnd();
            break;
        case 1:
            len = at; /* cut short, as a write killed midway leaves it */
            break;
        case 2:
            if (len + 1 < cap) {
                memmove(text + at + 1, text + at, len - at);
                text[at] = "{}[]\",:0e-9\\"[below(12)];
                len++;
            }
            break;
        default:
            memmove(text + at, text + at + 1, len - at - 1);
            len--;
        }
    }
    return len;
}

int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static void remove_dir_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4200];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

/* Whether a merge verdict of pass is earned: every report passed and no step says otherwise. */
static bool pass_is_earned(const json_t *reports, const json_t *run)
{
    size_t i, j;
    json_t *r, *f;
    json_array_foreach(reports, i, r) {
        if (sj_int(json_object_get(r, "verdict"), "exit_code", -1) != 0)
            return false;
        json_array_foreach(sj_arr(r, "findings"), j, f)
            if (ga_streq(sj_str(f, "severity", ""), "fail"))
                return false;
    }
    json_array_foreach(sj_arr(run, "steps"), i, r) {
        const char *st = sj_str(r, "status", "");
        if (!ga_streq(st, "pass") && !ga_streq(st, "skipped"))
            return false;
    }
    return json_array_size(reports) > 0;
}

/* Everything downstream of a merge: renderers, compare both ways, baseline from it and applied to it. */
static void exercise_summary(json_t *summary, const json_t *seed_summary)
{
    char err[512];
    free(suite_render_md(summary));
    free(suite_render_html(summary));
    json_t *c1 = suite_compare(seed_summary, summary, 5, false, err, sizeof err);
    json_t *c2 = suite_compare(summary, seed_summary, 5, false, err, sizeof err);
    if (c1) {
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            suite_compare_print(c1, devnull, true);
            fclose(devnull);
        }
    }
    json_decref(c1);
    json_decref(c2);
    json_t *b = suite_baseline_from_summary(summary, -1, 1, err, sizeof err);
    if (b && suite_baseline_validate(b, err, sizeof err) == 0) {
        json_t *copy = json_deep_copy(seed_summary);
        suite_baseline_apply(copy, b, "fuzz", -1);
        suite_summary_finalize(copy);
        json_decref(copy);
    }
    json_decref(b);
}

/* The names and schemas issue 27 found a report hiding behind. */
static const char *const other_schemas[] = {"gpuaccept-summary", "gpuaccept-suite-run", "gpuaccept-baseline",
                                            "gpuaccept-compare"};
static const char *const other_names[] = {"summary.json",    "suite_run.json", "a_copy.json",
                                          "gemm_flops.json", "mem_bw.json",    "gpuaccept-k8s.json"};

/* An issue-27 mutation of the victim report j, or none (then the round's usual ones apply): its schema
 * relabelled as a front-end file's, a key given twice (as text, *dup), or a new file name (*name). Returns
 * whether it made one. */
static bool issue27_mutation(json_t *j, char *name, size_t namelen, bool *dup, counts *c)
{
    switch (below(6)) {
    case 0:
        json_object_set_new(j, "schema", json_string(other_schemas[below(4)]));
        c->relabelled++;
        return true;
    case 1:
        *dup = true;
        c->dup_keys++;
        return true;
    case 2:
        snprintf(name, namelen, "%s", other_names[below(6)]);
        c->renamed++;
        return true;
    default:
        return false;
    }
}

/* One round on the reports of one case: mutate one file, load the directory as merge does, merge. seed_pass:
 * whether the case's intact reports and run record pass; a mutation can only take a pass away. */
static int merge_round(const char *case_dir, const char *work, const json_t *seed_summary, bool seed_pass,
                       counts *c)
{
    char src[4200], dst[4200], err[512];
    snprintf(src, sizeof src, "%s/reports", case_dir);
    remove_dir_files(work);
    DIR *d = opendir(src);
    if (!d)
        return -1;
    char names[32][256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 32)
        if (strstr(e->d_name, ".json"))
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    if (n == 0)
        return -1;
    size_t victim = below(n);
    bool broken = false;
    for (size_t i = 0; i < n; i++) {
        snprintf(src, sizeof src, "%s/reports/%s", case_dir, names[i]);
        snprintf(dst, sizeof dst, "%s/%s", work, names[i]);
        json_t *j = suite_load_json(src, err, sizeof err);
        if (!j)
            return -1;
        char *text = NULL, name[256];
        size_t len = 0;
        bool dup = false;
        snprintf(name, sizeof name, "%s", names[i]);
        if (i == victim && issue27_mutation(j, name, sizeof name, &dup, c)) {
            broken = true;
            for (size_t k = 0; k < n; k++) /* a new name, never one of the case's other files */
                if (k != i && strcmp(name, names[k]) == 0)
                    snprintf(name, sizeof name, "a_copy.json");
        } else if (i == victim && below(2) == 0) {
            mutate_tree(j);
            broken = true; /* maybe harmless: the oracle below asks only that a pass be earned */
        }
        text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (text && dup) {
            char *edited = duplicate_key(text, "\"verdict\":{\"result\":\"pass\",\"exit_code\":0}");
            free(text);
            text = edited;
        }
        if (!text)
            return -1;
        len = strlen(text);
        snprintf(dst, sizeof dst, "%s/%s", work, name);
        if (i == victim && !broken) {
            size_t cap = len + 16;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                return -1;
            }
            text = grown;
            len = mutate_bytes(text, len, cap);
            broken = true;
        }
        int rc = write_file(dst, text, len);
        free(text);
        if (rc != 0)
            return -1;
    }
    json_t *reports, *run;
    c->rounds++;
    if (suite_load_run_dir(work, &reports, &run, err, sizeof err) != 0) {
        c->refused++;
        return 0;
    }
    c->loaded++;
    json_t *summary = suite_merge(reports, run, work);
    c->merged++;
    long long verdict = sj_int(json_object_get(summary, "verdict"), "exit_code", -1);
    if (verdict < 0 || verdict > 5) {
        fprintf(stderr, "FAIL: verdict exit code %lld out of 0..5\n", verdict);
        c->passed_broken++;
    } else if (verdict == 0 && broken && (!seed_pass || !pass_is_earned(reports, run))) {
        fprintf(stderr, "FAIL: a merge passed although a report or step did not (round %ld)\n", c->rounds);
        c->passed_broken++;
    }
    exercise_summary(summary, seed_summary);
    json_decref(summary);
    json_decref(reports);
    json_decref(run);
    return 0;
}

/* One round of IDX: a small valid pair of files, then bytes changed or cut; the loader must refuse or load a
 * data set whose counts hold together. */
static int idx_round(const char *work, counts *c)
{
    enum { N = 40, SIDE = 4 };
    unsigned char img[16 + N * SIDE * SIDE + 8], lab[8 + N + 8];
    const unsigned char ih[16] = {0, 0, 8, 3, 0, 0, 0, N, 0, 0, 0, SIDE, 0, 0, 0, SIDE};
    const unsigned char lh[8] = {0, 0, 8, 1, 0, 0, 0, N};
    memcpy(img, ih, 16);
    memcpy(lab, lh, 8);
    for (int i = 0; i < N * SIDE * SIDE; i++)
        img[16 + i] = (unsigned char)rnd();
    for (int i = 0; i < N; i++)
        lab[8 + i] = (unsigned char)(i % 3);
    size_t ilen = 16 + N * SIDE * SIDE, llen = 8 + N;
    if (below(2))
        ilen = mutate_bytes((char *)img, ilen, sizeof img);
    else
        llen = mutate_bytes((char *)lab, llen, sizeof lab);
    char path[4200], err[512];
    remove_dir_files(work);
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", work);
    if (write_file(path, img, ilen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", work);
    if (write_file(path, lab, llen) != 0)
        return -1;
    ddp_dataset ds;
    c->idx_rounds++;
    if (ddp_dataset_load_idx(&ds, work, err, sizeof err) == 0) {
        c->idx_loaded++;
        if (ds.n < 1 || ds.dim < 1 || ds.classes < 2 || (size_t)(16 + ds.n * ds.dim) != ilen) {
            fprintf(stderr, "FAIL: IDX loaded %lld x %d of a %zu-byte file\n", (long long)ds.n, ds.dim, ilen);
            c->passed_broken++;
        }
        ddp_dataset_free(&ds);
    }
    return 0;
}

/* Whether each case's intact reports pass (the oracle of merge rounds). */
static void seed_passes(char (*case_dirs)[4096], size_t n, bool *pass)
{
    for (size_t i = 0; i < n; i++) {
        char p[4200], err[512];
        json_t *reports, *run;
        snprintf(p, sizeof p, "%s/reports", case_dirs[i]);
        pass[i] = suite_load_run_dir(p, &reports, &run, err, sizeof err) == 0 && pass_is_earned(reports, run);
        if (pass[i] || reports) {
            json_decref(reports);
            json_decref(run);
        }
    }
}

/* One round of the kind its number picks: merges most often, then each other input in turn. */
static int one_round(long round, char (*case_dirs)[4096], const bool *pass, size_t n_cases, const char *work,
                     const char *baselines, const json_t *seed_summary, counts *c)
{
    char dir[4200];
    size_t k = below(n_cases);
    switch (round % 8) {
    case 3:
        snprintf(dir, sizeof dir, "%s/idx", work);
        return idx_round(dir, c);
    case 5:
        return baseline_round(work, baselines, seed_summary, c);
    case 6:
        return profile_round(work, c);
    case 7:
        return round % 16 == 7 ? hostfile_round(work, c) : compare_round(seed_summary, c);
    default:
        snprintf(dir, sizeof dir, "%s/reports", work);
        return merge_round(case_dirs[k], dir, seed_summary, pass[k], c);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: suite_fuzz CASES_DIR WORK_DIR SECONDS [BASELINES_DIR]\n");
        return 2;
    }
    const char *cases = argv[1], *work = argv[2], *baselines = argc == 5 ? argv[4] : NULL;
    double seconds = atof(argv[3]);
    mkdir(work, 0755);
    char rdir[4200], idir[4200];
    snprintf(rdir, sizeof rdir, "%s/reports", work);
    snprintf(idir, sizeof idir, "%s/idx", work);
    mkdir(rdir, 0755);
    mkdir(idir, 0755);

    /* The seeds: every case, and one intact summary to compare and baseline against. */
    char case_dirs[16][4096];
    size_t n_cases = 0;
    DIR *d = opendir(cases);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n_cases < 16) {
        char p[4200];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/reports", cases, e->d_name);
        if (e->d_name[0] != '.' && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(case_dirs[n_cases++], sizeof case_dirs[0], "%s/%s", cases, e->d_name);
    }
    if (d)
        closedir(d);
    if (n_cases == 0) {
        fprintf(stderr, "FAIL: no case with reports/ in %s\n", cases);
        return 1;
    }
    /* The seed: the first case (in readdir's order) whose summary has a positive metric for compare's
     * rounds to halve; a case of node_health alone has none. */
    json_t *seed_summary = NULL;
    for (size_t k = 0; k < n_cases; k++) {
        char err[512], p[4200];
        snprintf(p, sizeof p, "%s/reports", case_dirs[k]);
        json_t *reports, *run;
        if (suite_load_run_dir(p, &reports, &run, err, sizeof err) != 0) {
            fprintf(stderr, "FAIL: the case %s does not load: %s\n", case_dirs[k], err);
            json_decref(seed_summary);
            return 1;
        }
        json_t *summary = suite_merge(reports, run, p);
        json_decref(reports);
        json_decref(run);
        bool has_metric = false;
        size_t i;
        json_t *m;
        json_array_foreach(json_object_get(summary, "metrics"), i, m)
            has_metric |= json_is_number(json_object_get(m, "value")) &&
                          json_number_value(json_object_get(m, "value")) > 0;
        if (!seed_summary || has_metric) {
            json_decref(seed_summary);
            seed_summary = summary;
        } else
            json_decref(summary);
        if (has_metric)
            break;
    }

    bool pass[16];
    seed_passes(case_dirs, n_cases, pass);
    counts c = {0};
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long round = 0;; round++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
            break;
        int rc = one_round(round, case_dirs, pass, n_cases, work, baselines, seed_summary, &c);
        if (rc != 0) {
            fprintf(stderr, "FAIL: could not prepare round %ld in %s\n", round, work);
            json_decref(seed_summary);
            return 1;
        }
    }
    json_decref(seed_summary);
    remove_dir_files(rdir);
    remove_dir_files(idir);
    printf(
        "suite_fuzz: %ld merge rounds (%ld refused, %ld loaded and merged; %ld relabelled, %ld renamed, %ld "
        "with a key twice), %ld IDX rounds (%ld loaded), %ld baselines (%ld taken), %ld profiles (%ld "
        "taken), "
        "%ld hostfiles (%ld taken), %ld comparisons (%ld refused); %ld passed while broken\n",
        c.rounds, c.refused, c.merged, c.relabelled, c.renamed, c.dup_keys, c.idx_rounds, c.idx_loaded,
        c.baseline_rounds, c.baseline_taken, c.profile_rounds, c.profile_taken, c.hostfile_rounds,
        c.hostfile_taken, c.compare_rounds, c.compare_refused, c.passed_broken);
    /* Long enough to reach the cases issue 27 found: each kind, and each of its mutations, several times. */
    if (c.rounds < 10 || c.idx_rounds < 3 || c.relabelled < 3 || c.renamed < 3 || c.dup_keys < 3 ||
        c.baseline_rounds < 3 || c.profile_rounds < 3 || c.hostfile_rounds < 3 || c.compare_rounds < 3) {
        fprintf(stderr, "FAIL: too few rounds to mean anything\n");
        return 1;
    }
    return c.passed_broken ? 1 : 0;
}
