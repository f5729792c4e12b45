/* Bad-link isolation: the world is split into pairs of members (nodes, or ranks when the job has one node),
 * every pair measures at once (allreduce_bw: its sweep), over rounds of different pairings. A pair below (1 -
 * tolerance) of the median is flagged (the screen, and what is measured again). A member is a suspect when it
 * is in at least two flagged pairs, in flagged pairs for most of the pairs it was in, and its own figure (the
 * median of its pairs) is an outlier among the other members' figures: below their median by more than the
 * tolerance and more than GA_OUTLIER_MAD_K scaled MADs of their logarithms (the one rule of every relative
 * check, common/core/ga_outlier.h: leave one out below GA_OUTLIER_FEW members). A flagged pair with no
 * suspect in it is a slow link when it is an outlier in the same sense among the other pairs' figures. The
 * MAD terms are the measurement's own noise: on a contended host the figures scatter by more than the
 * tolerance, and a difference the noise makes does not name a node (docs/allreduce_bw.md, "No false alarms").
 * Pure: the schedule and the analysis take plain data, so fixtures of 16 nodes test them. */
#ifndef GA_PAIRS_H
#define GA_PAIRS_H

#include <stdbool.h>

#define GA_PAIRS_HOST_MAX 64
/* Measurements a pair keeps: its round's and up to GA_REMEASURE_MAX more. */
#define GA_PAIR_MEASUREMENTS 17

/* Rounds a schedule can have without repeating a pair: m - 1 for an even m, m for an odd one (one member sits
 * out each round). */
int ga_pairs_max_rounds(int members);
/* Pairs of round r (0-based) by the circle method; out needs members / 2 entries. Returns how many. */
int ga_pairs_schedule(int members, int round, int (*out)[2]);

/* Ring neighbours first (docs/allreduce_bw.md "Pairs at scale"): NCCL's ring over nodes joins node i to node
 * i + 1 (mod members) in the world's rank order, which is the order of the members (node index: the node's
 * leader among the leaders, by world rank). When not every round of the circle runs, the world's slow link,
 * which its figures speak for, is one of those pairs: they get rounds of their own (even-odd, odd-even, and
 * for an odd count the wrap), inserted before circle round `at` (-1: none), and the circle rounds after them
 * skip those pairs. Every rank computes the same plan from (members, at, round): no pair is tested twice. */
bool ga_pairs_ring_neighbours(int members, int a, int b);
/* The rounds of ring neighbours: 2 for an even count, 3 for an odd one (the wrap), 0 below 3 members. */
int ga_pairs_neighbour_rounds(int members);
/* The circle round (ga_pairs_schedule) that holds pair a-b. */
int ga_pairs_circle_round_of(int members, int a, int b);
/* Rounds of the plan: circle_rounds, and the neighbour rounds when at >= 0. */
int ga_pairs_plan_rounds(int members, int at, int circle_rounds);
/* member's partner in round `round` of the plan, -1 when it sits out. Constant time. */
int ga_pairs_plan_partner(int members, int at, int round, int member);
/* The pairs of a plan round (lower member first); out needs members / 2 entries. Returns how many. */
int ga_pairs_plan_round(int members, int at, int round, int (*out)[2]);
/* How many pairs a plan round has: constant time for a circle round (the estimate plans 100,000 ranks). */
int ga_pairs_plan_count(int members, int at, int round);
/* How many of them are ring neighbours (constant time for a circle round). */
int ga_pairs_plan_ring_count(int members, int at, int round);

typedef struct {
    int round;
    int member[2];                   /* node index, or world rank on a single node */
    char host[2][GA_PAIRS_HOST_MAX]; /* their hosts */
    int rank[2];                     /* the first world rank of each member */
    double figure;   /* the pair's figure (allreduce_bw: its busbw at the largest size, out-of-place): the
                      * best of its measurements */
    double cpu_wait; /* of that best measurement: the share of it the less delayed of the two ends waited
                      * for a CPU (allreduce_bw: ar_group_cpu_wait; evidence of a busy host, for the report);
                      * -1 unknown */
    int measured;    /* how many times it was measured (1 + remeasurements) */
    double figures[GA_PAIR_MEASUREMENTS]; /* every measurement's figure, in order (the first measured ones) */
    double waits[GA_PAIR_MEASUREMENTS];   /* and its cpu_wait */
    int iters;      /* timed iterations it ran per size (fewer than -n when it was slow) */
    bool flagged;   /* set by ga_pairs_analyse: below (1 - tolerance) of the median pair, not contended */
    bool contended; /* set by ga_pairs_analyse: below it too, but held up by its host
                     * (GA_PAIRS_CPU_WAIT_CONTENDED, where ranks share CPUs): not judged */
    double bound;   /* set by ga_pairs_analyse for a flagged pair without a suspect: the other
                     * pairs' outlier bound */
    bool slow_link; /* set by ga_pairs_analyse: flagged, no suspect in it, below bound */
} ga_pair;

/* A pair measured again: its figure is the best of its measurements. Contention on a shared host (or a
 * fabric busy with another job) only ever slows a measurement down, so the best of N is the estimate least
 * disturbed by noise, while a real fault is slow every time and stays slow in its best. */
void ga_pairs_add_measurement(ga_pair *p, double figure, double cpu_wait);

/* The pairs of members that no entry of pairs[] tested. Writes up to max_out of them to out (lower member
 * first, in order) and returns how many there are in all; members * (members - 1) / 2 minus that is how many
 * were tested. */
int ga_pairs_untested(int members, const ga_pair *pairs, int n, int (*out)[2], int max_out);

/* Coverage split as the world's ring sees it: ring-neighbour pairs tested of all of them, other pairs tested
 * of all of them. */
typedef struct {
    int ring_tested, ring_total;
    long long other_tested, other_total;
} ga_pairs_cover;
/* Fills c; writes up to max_out untested ring-neighbour pairs to out and returns how many there are. -1 when
 * memory runs out. */
int ga_pairs_coverage(int members, const ga_pair *pairs, int n, ga_pairs_cover *c, int (*out)[2],
                      int max_out);

typedef struct ga_pairs_verdict ga_pairs_verdict;
/* Batches in which to measure again the pairs that would make a finding (a slow link, or a flagged pair of a
 * suspect), per v from ga_pairs_analyse, and were measured fewer than max_measured times: batch_of[i] is the
 * batch of pairs[i] (-1 when it is not measured again); no member is in two pairs of one batch, so a batch
 * runs at once like a round. Returns how many batches (0: every finding stands on max_measured figures). */
int ga_pairs_remeasure_batches(const ga_pair *pairs, int n, const ga_pairs_verdict *v, int max_measured,
                               int *batch_of);

typedef struct {
    int member;
    char host[GA_PAIRS_HOST_MAX];
    int rank;
    int pairs, flagged_pairs;
    double min_figure; /* lowest figure of the pairs it was in */
    double figure;     /* median figure of the pairs it was in (the best of them where ranks share CPUs) */
    double bound;      /* a suspect's figure is below this: the outlier bound of the members' figures (of the
                        * other members' with fewer than GA_OUTLIER_FEW) */
    bool suspect;
} ga_pair_member;

struct ga_pairs_verdict {
    double median;                      /* of every pair's figure */
    double member_median, member_bound; /* the members' figures: median, and the bound over all of them */
    int flagged;                        /* pairs flagged */
    int contended;                      /* pairs below the tolerance not judged: held up by their host */
    int slow_links;
    int n_members;           /* entries of members[] (every member seen in a pair) */
    ga_pair_member *members; /* malloc'd, by member index order; free with ga_pairs_verdict_free */
    int n_suspects;
    bool
        cpus_shared; /* judged as where ranks share CPUs (GA_PAIRS_CPU_WAIT_CONTENDED, members' best pairs) */
};

/* Where ranks share CPUs (more ranks than CPUs on a node, ga_ranks_per_cpu), a pair's figure is as much where
 * the scheduler put its two ranks as their link: two ranks on one busy CPU exchange several times slower, and
 * the placement holds for seconds, through every remeasurement. Measured on 4 ranks on 2 cores beside a
 * looping build (docs/allreduce_bw.md "Ranks that share CPUs"): 6 of 12 fault-free runs named a healthy rank
 * or link, a healthy member up to 7.1x below the others. There a pair is judged only when its ranks had CPUs
 * (GA_PAIRS_CPU_WAIT_CONTENDED below), and a member's figure is the best of its pairs (ga_pairs_analyse). */
/* There a pair below the tolerance is no evidence when the less delayed of its two ranks waited for a CPU
 * for this share of its best measurement or more (allreduce_bw: ar_group_cpu_wait): the host held it up.
 * Measured: the healthy pairs that were flagged beside a build waited 0.48-0.97 of the time, a rank slowed by
 * the test hooks (which sleep, as a rank waiting on its device does) 0.00-0.06. Where every rank has a CPU
 * the share is not used: a rank polling for a slow link's data waits on the run queue as much as a held-up
 * one (0.85 on the namespace cluster's rate-limited links, whose ranks share the host's cores unknown to
 * them). */
#define GA_PAIRS_CPU_WAIT_CONTENDED 0.25

/* Flags pairs (sets pairs[i].flagged) and fills out. cpus_shared: the members' ranks share CPUs (above).
 * Returns 0, or -1 when out of memory. */
int ga_pairs_analyse(ga_pair *pairs, int n, double tolerance, bool cpus_shared, ga_pairs_verdict *out);
void ga_pairs_verdict_free(ga_pairs_verdict *v);

#endif
