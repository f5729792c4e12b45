#include "ga_pairs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_outlier.h"
#include "ga_stats.h"

_Static_assert(GA_PAIR_MEASUREMENTS == 1 + GA_REMEASURE_MAX,
               "a pair keeps every measurement --remeasure allows");

int ga_pairs_max_rounds(int members)
{
    if (members < 2)
        return 0;
    return members % 2 ? members : members - 1;
}

int ga_pairs_schedule(int members, int round, int (*out)[2])
{
    if (members < 2)
        return 0;
    int m = members % 2 ? members + 1 : members; /* an odd count gets a bye: member m-1 sits out */
    int ring = m - 1;
    int r = round % ring, n = 0;
    int first[2] = {m - 1, r};
    if (first[0] < members)
        out[n][0] = first[1], out[n][1] = first[0], n++;
    for (int k = 1; k < m / 2; k++) {
        int a = (r + k) % ring, b = (r - k + ring) % ring;
        out[n][0] = a < b ? a : b;
        out[n][1] = a < b ? b : a;
        n++;
    }
    return n;
}

bool ga_pairs_ring_neighbours(int members, int a, int b)
{
    if (members < 2 || a == b || a < 0 || b < 0 || a >= members || b >= members)
        return false;
    return (a + 1) % members == b || (b + 1) % members == a;
}

int ga_pairs_neighbour_rounds(int members)
{
    return members < 3 ? 0 : members % 2 ? 3 : 2;
}

/* The circle's ring: its places other than an even count's fixed member (the last). */
static int circle_ring(int members)
{
    return members % 2 ? members : members - 1;
}

int ga_pairs_circle_round_of(int members, int a, int b)
{
    int ring = circle_ring(members);
    if (members % 2 == 0 && (a == members - 1 || b == members - 1))
        return a == members - 1 ? b : a;
    /* round r pairs the places whose sum is 2r (mod ring): r = (a + b) / 2, the ring being odd */
    return (int)((long long)(a + b) % ring * ((ring + 1) / 2) % ring);
}

/* member's partner in circle round c, -1 when it sits out (an odd count's bye). */
static int circle_partner(int members, int c, int x)
{
    int ring = circle_ring(members);
    if (members % 2 == 0 && x == members - 1)
        return c;
    if (x == c)
        return members % 2 ? -1 : members - 1;
    return (int)(((2LL * c - x) % ring + ring) % ring);
}

/* member's partner in neighbour round k (0: even-odd, 1: odd-even and an even count's wrap, 2: an odd
 * count's wrap), -1 when it sits out. */
static int neighbour_partner(int members, int k, int x)
{
    bool wrap = (k == 1 && members % 2 == 0) || k == 2;
    if (wrap && (x == 0 || x == members - 1))
        return members - 1 - x;
    if (k == 2)
        return -1;
    int p = (x - k) % 2 == 0 ? x + 1 : x - 1; /* k = 0: 2j with 2j + 1; k = 1: 2j + 1 with 2j + 2 */
    return p >= k && p < members && !(x == 0 && k == 1) ? p : -1;
}

int ga_pairs_plan_rounds(int members, int at, int circle_rounds)
{
    return circle_rounds + (at >= 0 ? ga_pairs_neighbour_rounds(members) : 0);
}

int ga_pairs_plan_partner(int members, int at, int round, int member)
{
    int e = at >= 0 ? ga_pairs_neighbour_rounds(members) : 0;
    if (members < 2 || member < 0 || member >= members)
        return -1;
    if (e == 0 || round < at)
        return circle_partner(members, round, member);
    if (round >= at + e) { /* a circle round after the neighbours': theirs are tested */
        int p = circle_partner(members, round - e, member);
        return p >= 0 && !ga_pairs_ring_neighbours(members, member, p) ? p : -1;
    }
    int p = neighbour_partner(members, round - at, member); /* not again when a circle round before had it */
    return p >= 0 && ga_pairs_circle_round_of(members, member, p) >= at ? p : -1;
}

int ga_pairs_plan_round(int members, int at, int round, int (*out)[2])
{
    int e = at >= 0 ? ga_pairs_neighbour_rounds(members) : 0;
    if (e == 0 || round < at)
        return ga_pairs_schedule(members, round, out);
    int n = 0;
    if (round >= at + e) { /* the circle's order, less the neighbours */
        n = ga_pairs_schedule(members, round - e, out);
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!ga_pairs_ring_neighbours(members, out[i][0], out[i][1]))
                out[k][0] = out[i][0], out[k][1] = out[i][1], k++;
        return k;
    }
    for (int x = 0; x < members; x++) {
        int p = ga_pairs_plan_partner(members, at, round, x);
        if (p > x)
            out[n][0] = x, out[n][1] = p, n++;
    }
    return n;
}

/* Ring-neighbour pairs in circle round c: c's own pair, and the one pair (i, i + 1) whose places sum to 2c.
 */
static int circle_neighbours(int members, int c)
{
    int ring = circle_ring(members), n = 0;
    int p = circle_partner(members, c, c);
    n += p >= 0 && ga_pairs_ring_neighbours(members, c, p);
    int i = (int)(((2LL * c - 1) % ring + ring) % ring * ((ring + 1) / 2) % ring);
    n += i != c && circle_partner(members, c, i) == (i + 1) % members;
    return n;
}

int ga_pairs_plan_ring_count(int members, int at, int round)
{
    int e = at >= 0 ? ga_pairs_neighbour_rounds(members) : 0;
    if (members < 2 || (e > 0 && round >= at + e))
        return 0;
    return e == 0 || round < at ? circle_neighbours(members, round) : ga_pairs_plan_count(members, at, round);
}

int ga_pairs_plan_count(int members, int at, int round)
{
    int e = at >= 0 ? ga_pairs_neighbour_rounds(members) : 0;
    if (members < 2)
        return 0;
    if (e == 0 || round < at)
        return members / 2;
    if (round >= at + e)
        return members / 2 - circle_neighbours(members, round - e);
    int n = 0; /* a neighbour round: a few per plan, one pass over the members */
    for (int x = 0; x < members; x++)
        n += ga_pairs_plan_partner(members, at, round, x) > x;
    return n;
}

void ga_pairs_add_measurement(ga_pair *p, double figure, double cpu_wait)
{
    if (p->measured == 0 || figure > p->figure)
        p->figure = figure, p->cpu_wait = cpu_wait;
    if (p->measured < GA_PAIR_MEASUREMENTS)
        p->figures[p->measured] = figure, p->waits[p->measured] = cpu_wait;
    p->measured++;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Each entry's pair as one key (lower member first), sorted: k keys in *keys (malloc'd). -1: no memory. */
static int pair_keys(int members, const ga_pair *pairs, int n, long long **keys)
{
    *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof **keys);
    if (!*keys)
        return -1;
    for (int i = 0; i < n; i++) {
        long long a = pairs[i].member[0], b = pairs[i].member[1];
        (*keys)[i] = a < b ? a * members + b : b * members + a;
    }
    qsort(*keys, (size_t)n, sizeof **keys, cmp_ll);
    return n;
}

/* Sorted keys: one merge pass over every pair of members (a 2,048-node plan has 1.3 million entries: a scan
 * of them per pair would never end). */
int ga_pairs_untested(int members, const ga_pair *pairs, int n, int (*out)[2], int max_out)
{
    long long *keys;
    if (pair_keys(members, pairs, n, &keys) < 0)
        n = 0; /* no memory: nothing counts as tested, and every pair is listed */
    int count = 0, k = 0;
    for (int a = 0; a < members; a++)
        for (int b = a + 1; b < members; b++) {
            long long key = (long long)a * members + b;
            while (k < n && keys[k] < key)
                k++;
            if (k < n && keys[k] == key)
                continue;
            if (count < max_out)
                out[count][0] = a, out[count][1] = b;
            count++;
        }
    free(keys);
    return count;
}

int ga_pairs_coverage(int members, const ga_pair *pairs, int n, ga_pairs_cover *c, int (*out)[2], int max_out)
{
    memset(c, 0, sizeof *c);
    c->ring_total = members < 2 ? 0 : members == 2 ? 1 : members;
    c->other_total = (long long)members * (members - 1) / 2 - c->ring_total;
    char *ring = calloc((size_t)(members > 0 ? members : 1), 1); /* ring[i]: pair i, i + 1 tested */
    long long *other = malloc((size_t)(n > 0 ? n : 1) * sizeof *other);
    if (!ring || !other) {
        free(ring);
        free(other);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        int a = pairs[i].member[0], b = pairs[i].member[1];
        if (ga_pairs_ring_neighbours(members, a, b))
            ring[(a + 1) % members == b ? a : b] = 1;
        else if (a != b)
            other[k++] = a < b ? (long long)a * members + b : (long long)b * members + a;
    }
    qsort(other, (size_t)k, sizeof *other, cmp_ll); /* a pair measured in two entries counts once */
    for (int i = 0; i < k; i++)
        c->other_tested += i == 0 || other[i] != other[i - 1];
    int untested = 0;
    for (int i = 0; i < c->ring_total; i++) {
        if (ring[i]) {
            c->ring_tested++;
        } else {
            if (untested < max_out)
                out[untested][0] = i < (i + 1) % members ? i : (i + 1) % members,
                out[untested][1] = i < (i + 1) % members ? (i + 1) % members : i;
            untested++;
        }
    }
    free(ring);
    free(other);
    return untested;
}

static bool suspect_in(const ga_pairs_verdict *v, const ga_pair *p)
{
    for (int j = 0; j < v->n_members; j++)
        if (v->members[j].suspect &&
            (v->members[j].member == p->member[0] || v->members[j].member == p->member[1]))
            return true;
    return false;
}

int ga_pairs_remeasure_batches(const ga_pair *pairs, int n, const ga_pairs_verdict *v, int max_measured,
                               int *batch_of)
{
    int batches = 0;
    for (int i = 0; i < n; i++) {
        batch_of[i] = -1;
        if (pairs[i].measured >= max_measured ||
            (!pairs[i].slow_link && !(pairs[i].flagged && suspect_in(v, &pairs[i]))))
            continue;
        /* first batch where neither member is busy yet */
        for (int b = 0;; b++) {
            bool busy = false;
            for (int j = 0; j < i && !busy; j++)
                busy =
                    batch_of[j] == b &&
                    (pairs[j].member[0] == pairs[i].member[0] || pairs[j].member[0] == pairs[i].member[1] ||
                     pairs[j].member[1] == pairs[i].member[0] || pairs[j].member[1] == pairs[i].member[1]);
            if (!busy) {
                batch_of[i] = b;
                batches = b + 1 > batches ? b + 1 : batches;
                break;
            }
        }
    }
    return batches;
}

static ga_pair_member *member_of(ga_pairs_verdict *v, int member)
{
    for (int i = 0; i < v->n_members; i++)
        if (v->members[i].member == member)
            return &v->members[i];
    return NULL;
}

static int cmp_member(const void *a, const void *b)
{
    return ((const ga_pair_member *)a)->member - ((const ga_pair_member *)b)->member;
}

/* The outlier bound of figures v[0..n-1] other than v[skip] (skip -1: none), by the one rule of every
 * relative check (common/core/ga_outlier.h): their median less the larger of the tolerance and
 * GA_OUTLIER_MAD_K scaled MADs of their logarithms. -1 when memory runs out. */
static double outlier_bound(const double *v, int n, int skip, const ga_outlier_rule *rule, double *median)
{
    ga_outlier_set set;
    if (ga_outlier_bound(v, n, skip, rule, &set) != 0)
        return -1;
    *median = set.median;
    return set.bound;
}

/* Each figure's bound by the outlier rule among v[0..n-1] (leave one out below GA_OUTLIER_FEW figures), 0
 * when it is not judged (fewer than two figures). -1 when memory runs out. */
static int rule_bounds(const double *v, int n, const ga_outlier_rule *rule, double *bounds)
{
    ga_outlier_verdict *ov = malloc((size_t)(n > 0 ? n : 1) * sizeof *ov);
    if (!ov || ga_outlier_judge(v, n, rule, ov) < 0) {
        free(ov);
        return -1;
    }
    for (int i = 0; i < n; i++)
        bounds[i] = ov[i].bound;
    free(ov);
    return 0;
}

/* Whether every pair of pairs[i]'s round was flagged (in a round of two pairs or more): then the round was
 * slow (the host or fabric busy at that time, or ranks sharing cores), which says nothing about one link.
 * flagged_in / pairs_in: per round. */
static bool whole_round_flagged(const ga_pair *p, const int *flagged_in, const int *pairs_in)
{
    return pairs_in[p->round] >= 2 && flagged_in[p->round] == pairs_in[p->round];
}

/* Median figure of member's pairs, or with best their highest; 0 when it has none. */
static double member_figure(const ga_pair *pairs, int n, int member, bool best, double *buf)
{
    int k = 0;
    double top = 0;
    for (int i = 0; i < n; i++)
        if (pairs[i].member[0] == member || pairs[i].member[1] == member) {
            buf[k++] = pairs[i].figure;
            top = pairs[i].figure > top ? pairs[i].figure : top;
        }
    return !k ? 0 : best ? top : ga_median(buf, (size_t)k);
}

/* Flags the pairs below (1 - tolerance) of the median (not those held up by their host where ranks share
 * CPUs) and tallies each member's pairs into out->members. */
static void flag_pairs(ga_pair *pairs, int n, double tolerance, bool cpus_shared, ga_pairs_verdict *out)
{
    double threshold = out->median * (1.0 - tolerance);
    for (int i = 0; i < n; i++) {
        ga_pair *p = &pairs[i];
        p->contended = cpus_shared && p->figure < threshold && p->cpu_wait >= GA_PAIRS_CPU_WAIT_CONTENDED;
        p->flagged = p->figure < threshold && !p->contended;
        out->contended += p->contended;
        p->slow_link = false;
        out->flagged += p->flagged;
        for (int s = 0; s < 2; s++) {
            ga_pair_member *m = member_of(out, p->member[s]);
            if (!m) {
                m = &out->members[out->n_members++];
                m->member = p->member[s];
                snprintf(m->host, sizeof m->host, "%s", p->host[s]);
                m->rank = p->rank[s];
                m->min_figure = p->figure;
            }
            m->pairs++;
            m->flagged_pairs += p->flagged;
            if (p->figure < m->min_figure)
                m->min_figure = p->figure;
        }
    }
}

/* Links: a flagged pair with no suspect in it, and an outlier among the pairs' figures by the same rule
 * (leave one out below GA_OUTLIER_FEW pairs, as for members: with 6 pairs a slow one would otherwise pull
 * down the median it is held to). Comparing a pair with what its ends reach elsewhere was tried and dropped:
 * with few members the slow link is among its ends' other pairs, and the ratios of every pair of those ends
 * scatter as widely as the fault. bw, bounds: n each; tally: 2 x rounds. -1 when memory runs out. */
static int find_slow_links(ga_pair *pairs, int n, int rounds, const ga_outlier_rule *rule,
                           ga_pairs_verdict *out, double *bw, double *bounds, int *tally)
{
    for (int j = 0; j < n; j++) {
        bw[j] = pairs[j].figure;
        tally[pairs[j].round]++;
        tally[rounds + pairs[j].round] += pairs[j].flagged;
    }
    if (rule_bounds(bw, n, rule, bounds) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        ga_pair *p = &pairs[i];
        p->bound = 0;
        p->slow_link = false;
        if (!p->flagged || suspect_in(out, p) || n < 2 || whole_round_flagged(p, tally + rounds, tally))
            continue;
        p->bound = bounds[i];
        p->slow_link = p->figure < p->bound;
        out->slow_links += p->slow_link;
    }
    return 0;
}

int ga_pairs_analyse(ga_pair *pairs, int n, double tolerance, bool cpus_shared, ga_pairs_verdict *out)
{
    memset(out, 0, sizeof *out);
    out->cpus_shared = cpus_shared;
    ga_outlier_rule rule = {tolerance, GA_HIGHER_IS_BETTER, 0};
    int rounds = 1;
    for (int i = 0; i < n; i++)
        rounds = pairs[i].round + 1 > rounds ? pairs[i].round + 1 : rounds;
    double *bw = calloc((size_t)(n > 0 ? 2 * n : 1), sizeof *bw);
    double *bounds = calloc((size_t)(n > 0 ? 2 * n : 1), sizeof *bounds);
    int *tally = calloc(2 * (size_t)rounds, sizeof *tally); /* per round: pairs, then flagged pairs */
    out->members = calloc((size_t)(2 * n > 0 ? 2 * n : 1), sizeof *out->members);
    if (!bw || !bounds || !tally || !out->members) {
        free(bw);
        free(bounds);
        free(tally);
        free(out->members);
        out->members = NULL;
        return -1;
    }
    for (int i = 0; i < n; i++)
        bw[i] = pairs[i].figure;
    out->median = ga_median(bw, (size_t)n);

    flag_pairs(pairs, n, tolerance, cpus_shared, out);
    qsort(out->members, (size_t)out->n_members, sizeof *out->members, cmp_member);

    /* Members: each one's figure is the median of its pairs, so one noisy pair does not move it; a slow
     * member is an outlier among the figures (at most half of them can be: the median member is taken as
     * healthy). Where ranks share CPUs, the best of its pairs: there one pair in three can be tens of times
     * slower for where its ranks were put, which moves the median of three, and the others' figures the
     * member is held to with it (a rank delayed 150x went unnamed so); only its own slowness keeps every pair
     * of a member slow, as contention only ever slows a measurement. */
    for (int i = 0; i < out->n_members; i++)
        out->members[i].figure = member_figure(pairs, n, out->members[i].member, cpus_shared, bw + n);
    for (int i = 0; i < out->n_members; i++)
        bw[i] = out->members[i].figure;
    out->member_bound = outlier_bound(bw, out->n_members, -1, &rule, &out->member_median);
    /* Two flagged pairs sharing one member point at it; one flagged pair alone cannot say which end is slow.
     * Each member's bound is the outlier rule's (common/core/ga_outlier.h): with fewer than GA_OUTLIER_FEW
     * members it is held to the others' median (leave one out: a slow one would otherwise pull down the very
     * figure it is measured against, 4 ranks: its figure is one of four); with more, one member moves them
     * little, and the bound of all figures is the one. */
    bool oom = out->member_bound < 0 || rule_bounds(bw, out->n_members, &rule, bounds) != 0;
    for (int i = 0; !oom && i < out->n_members; i++) {
        ga_pair_member *m = &out->members[i];
        m->bound = bounds[i];
        m->suspect = m->flagged_pairs >= 2 && 2 * m->flagged_pairs > m->pairs && m->figure < m->bound;
        out->n_suspects += m->suspect;
    }

    /* Links: a flagged pair with no suspect in it, and an outlier among the pairs' figures by the same rule
     * (leave one out below GA_OUTLIER_FEW pairs, as for members: with 6 pairs a slow one would otherwise pull
     * down the median it is held to). Comparing a pair with what its ends reach elsewhere was tried and
     * dropped: with few members the slow link is among its ends' other pairs, and the ratios of every pair of
     * those ends scatter as widely as the fault. */
    oom = oom || find_slow_links(pairs, n, rounds, &rule, out, bw, bounds, tally) != 0;
    free(bw);
    free(bounds);
    free(tally);
    if (oom) {
        ga_pairs_verdict_free(out);
        return -1;
    }
    return 0;
}

void ga_pairs_verdict_free(ga_pairs_verdict *v)
{
    free(v->members);
    v->members = NULL;
    v->n_members = 0;
}
