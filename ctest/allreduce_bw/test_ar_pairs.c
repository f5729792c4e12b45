/* Fixture-driven test of the pairs analysis (jansson-style suites): each folder under pairs/ holds `input`, a
 * cluster described by its nodes' and links' speeds, and `expected`, what the analysis must conclude. The
 * driver builds the rounds with the real schedule, gives each pair min(speed of its ends) or its link's
 * speed, runs ar_pairs_analyse and ar_pairs_findings, and compares its transcript with `expected`.
 * input lines: "members N", "rounds R", "tolerance F", "speed S" (every node), "node I S", "link A B S". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_pairs.h"

#define MAX_MEMBERS 256
#define MAX_LINKS 32

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE_DIR\n", argv[0]);
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/input", argv[1]);
    FILE *in = fopen(path, "r");
    if (!in) {
        perror(path);
        return 2;
    }
    int members = 0, rounds = 1, n_links = 0;
    double tolerance = 0.1, speed[MAX_MEMBERS], base = 0;
    int link_a[MAX_LINKS], link_b[MAX_LINKS];
    double link_s[MAX_LINKS];
    for (int i = 0; i < MAX_MEMBERS; i++)
        speed[i] = -1;
    char line[256];
    while (fgets(line, sizeof line, in)) {
        int a, b;
        double s;
        if (sscanf(line, "members %d", &members) == 1 || sscanf(line, "rounds %d", &rounds) == 1 ||
            sscanf(line, "tolerance %lf", &tolerance) == 1 || sscanf(line, "speed %lf", &base) == 1)
            continue;
        if (sscanf(line, "node %d %lf", &a, &s) == 2 && a >= 0 && a < MAX_MEMBERS)
            speed[a] = s;
        else if (sscanf(line, "link %d %d %lf", &a, &b, &s) == 3 && n_links < MAX_LINKS) {
            link_a[n_links] = a, link_b[n_links] = b, link_s[n_links++] = s;
        }
    }
    fclose(in);
    if (members < 2 || members > MAX_MEMBERS) {
        fprintf(stderr, "%s: bad members %d\n", path, members);
        return 2;
    }
    if (rounds > ar_pairs_max_rounds(members)) /* as the program caps them */
        rounds = ar_pairs_max_rounds(members);
    for (int i = 0; i < members; i++)
        if (speed[i] < 0)
            speed[i] = base;

    ar_pair *pairs = calloc((size_t)(rounds * members), sizeof *pairs);
    int(*sched)[2] = calloc((size_t)members, sizeof *sched);
    int n = 0;
    for (int r = 0; r < rounds; r++) {
        int np = ar_pairs_schedule(members, r, sched);
        for (int p = 0; p < np; p++, n++) {
            ar_pair *pr = &pairs[n];
            pr->round = r;
            for (int s = 0; s < 2; s++) {
                pr->member[s] = sched[p][s];
                pr->rank[s] = sched[p][s] * 8;
                snprintf(pr->host[s], sizeof pr->host[s], "node%02d", sched[p][s]);
            }
            int a = sched[p][0], b = sched[p][1];
            pr->busbw = speed[a] < speed[b] ? speed[a] : speed[b];
            for (int l = 0; l < n_links; l++)
                if ((link_a[l] == a && link_b[l] == b) || (link_a[l] == b && link_b[l] == a))
                    pr->busbw = link_s[l];
        }
    }

    ar_pairs_verdict v;
    if (ar_pairs_analyse(pairs, n, tolerance, &v) != 0)
        return 2;
    ga_findings f;
    ga_findings_init(&f);
    ar_pairs_findings(pairs, n, &v, tolerance, false, &f);

    char got[16384];
    size_t len = 0;
    len += (size_t)snprintf(got + len, sizeof got - len, "pairs %d flagged %d suspects %d median %.2f\n", n,
                            v.flagged, v.n_suspects, v.median_busbw);
    for (int i = 0; i < n; i++)
        if (pairs[i].flagged)
            len += (size_t)snprintf(got + len, sizeof got - len, "flagged round %d %s %s %.2f\n",
                                    pairs[i].round, pairs[i].host[0], pairs[i].host[1], pairs[i].busbw);
    for (int i = 0; i < v.n_members; i++)
        if (v.members[i].suspect)
            len += (size_t)snprintf(got + len, sizeof got - len, "suspect %s in %d of %d pairs\n",
                                    v.members[i].host, v.members[i].flagged_pairs, v.members[i].pairs);
    for (size_t i = 0; i < f.count; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "finding %s %s %s\n",
                                ga_severity_name(f.items[i].severity), f.items[i].code, f.items[i].host);
    ar_pairs_verdict_free(&v);
    ga_findings_free(&f);
    free(pairs);
    free(sched);

    snprintf(path, sizeof path, "%s/expected", argv[1]);
    FILE *ex = fopen(path, "r");
    char want[16384] = "";
    size_t wl = ex ? fread(want, 1, sizeof want - 1, ex) : 0;
    want[wl] = '\0';
    if (ex)
        fclose(ex);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s: transcript differs.\n--- expected\n%s--- got\n%s", argv[1], want, got);
        return 1;
    }
    printf("%s", got);
    return 0;
}
