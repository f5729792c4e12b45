/* Fixture-driven test of the shared flagging (tp_flag): each folder of fixtures/ holds an `input` describing
 * a cluster and a policy, and an `expected` list of what must be flagged (and efficiencies that must be
 * unknown). A new case is a new folder.
 *
 * input:    tolerance F | min_efficiency F | cluster NODES GPUS MODEL VALUE PEAK | set NODE GPU VALUE |
 *           model NODE GPU MODEL PEAK            (MODEL without spaces; PEAK 0 = unknown)
 * expected: flag NODE RANK GPU CODE (every flagged finding, any order) | none | no_efficiency NODE GPU |
 *           efficiency NODE GPU VALUE | median VALUE */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_flag.h"

#define MAXN 4096

static tp_sample s[MAXN];
static tp_verdict v[MAXN];
static char models[MAXN][64];
static int nodes, gpus;

static int at(int node, int gpu)
{
    return node * gpus + gpu;
}

static int run_case(const char *dir)
{
    char path[1024], line[256];
    tp_policy p = {0.10, 0};
    snprintf(path, sizeof path, "%s/input", dir);
    FILE *in = fopen(path, "r");
    if (!in) {
        printf("FAIL %s: no input\n", dir);
        return 1;
    }
    int n = 0;
    while (fgets(line, sizeof line, in)) {
        char model[64];
        double a, b;
        int x, y;
        if (sscanf(line, "tolerance %lf", &a) == 1)
            p.tolerance = a;
        else if (sscanf(line, "min_efficiency %lf", &a) == 1)
            p.min_efficiency = a;
        else if (sscanf(line, "cluster %d %d %63s %lf %lf", &nodes, &gpus, model, &a, &b) == 5) {
            n = nodes * gpus;
            for (int i = 0; i < n; i++) {
                snprintf(models[i], sizeof models[i], "%s", model);
                /* a deterministic +-2% spread, as identical GPUs show */
                double jitter = 1.0 + 0.02 * sin(i * 12.9898);
                s[i] = (tp_sample){"host", i / gpus, i, i % gpus, models[i], a * jitter, b};
            }
        } else if (sscanf(line, "set %d %d %lf", &x, &y, &a) == 3)
            s[at(x, y)].value = a;
        else if (sscanf(line, "model %d %d %63s %lf", &x, &y, model, &b) == 4) {
            snprintf(models[at(x, y)], sizeof models[0], "%s", model);
            s[at(x, y)].peak = b;
        }
    }
    fclose(in);

    double median = tp_flag(s, n, &p, v);
    ga_findings f;
    ga_findings_init(&f);
    int flagged = tp_add_findings(&f, &(tp_labels){"x", "u", "BELOW_MEDIAN", "BELOW_PEAK"}, s, v, n, &p);

    snprintf(path, sizeof path, "%s/expected", dir);
    FILE *ex = fopen(path, "r");
    if (!ex) {
        printf("FAIL %s: no expected\n", dir);
        return 1;
    }
    int errors = 0, expected_flags = 0;
    char *matched = calloc(f.count + 1, 1);
    while (fgets(line, sizeof line, ex)) {
        char code[48];
        int x, y, r;
        double a;
        if (sscanf(line, "flag %d %d %d %47s", &x, &r, &y, code) == 4) {
            expected_flags++;
            int found = 0;
            for (size_t i = 0; i < f.count; i++)
                if (!matched[i] && f.items[i].node_index == x && f.items[i].world_rank == r &&
                    f.items[i].gpu == y && strcmp(f.items[i].code, code) == 0) {
                    matched[i] = 1;
                    found = 1;
                    break;
                }
            if (!found) {
                printf("FAIL %s: expected %s on node %d rank %d GPU %d, not flagged\n", dir, code, x, r, y);
                errors++;
            }
        } else if (sscanf(line, "no_efficiency %d %d", &x, &y) == 2) {
            if (v[at(x, y)].efficiency >= 0) {
                printf("FAIL %s: node %d GPU %d has efficiency %g, expected none\n", dir, x, y,
                       v[at(x, y)].efficiency);
                errors++;
            }
        } else if (sscanf(line, "efficiency %d %d %lf", &x, &y, &a) == 3) {
            if (fabs(v[at(x, y)].efficiency - a) > 1e-6) {
                printf("FAIL %s: node %d GPU %d efficiency %g, expected %g\n", dir, x, y,
                       v[at(x, y)].efficiency, a);
                errors++;
            }
        } else if (sscanf(line, "median %lf", &a) == 1) {
            if (fabs(median - a) > 1e-6 * fabs(a)) {
                printf("FAIL %s: median %g, expected %g\n", dir, median, a);
                errors++;
            }
        }
    }
    fclose(ex);
    for (size_t i = 0; i < f.count; i++)
        if (!matched[i]) {
            printf("FAIL %s: unexpected %s: %s\n", dir, f.items[i].code, f.items[i].message);
            errors++;
        }
    if ((int)f.count != expected_flags || flagged > expected_flags) {
        printf("FAIL %s: %zu findings (%d GPUs flagged), %d expected\n", dir, f.count, flagged,
               expected_flags);
        errors++;
    }
    free(matched);
    ga_findings_free(&f);
    printf("%s %s (%d GPUs, %d flagged)\n", errors ? "FAIL" : "ok  ", dir, n, flagged);
    return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "fixtures";
    DIR *d = opendir(root);
    if (!d) {
        printf("FAIL: cannot open %s\n", root);
        return 1;
    }
    int failures = 0, cases = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        failures += run_case(dir);
        cases++;
    }
    closedir(d);
    if (cases < 5) {
        printf("FAIL: only %d fixture cases found in %s\n", cases, root);
        return 1;
    }
    return failures ? 1 : 0;
}
