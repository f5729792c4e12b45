#include "ar_gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_budget.h"
#include "ar_record.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_time.h"

/* What each rank shares after a size: its group, its time per operation (out of place), whether its clock is
 * past the deadline. */
enum { SHARED = 3 };

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    return p;
}

/* Rank 0: the first time a group is far below its peers, which ranks it is and what follows. */
static void log_far(const ar_group_gate *g, int k, int s, double fig, int world)
{
    char ranks[128] = "";
    size_t len = 0;
    for (int r = 0, listed = 0; r < world && len < sizeof ranks - 16; r++)
        if ((int)g->times[r * SHARED] == k && listed++ < 4)
            len += (size_t)snprintf(ranks + len, sizeof ranks - len, "%s%d", listed > 1 ? "," : "", r);
    ga_log("COMM",
           "%s %d (ranks %s%s): %.3f GB/s at %llu B, more than %.0fx below its peers: one timed "
           "operation per size from here",
           g->what ? g->what : "group", k, ranks, len >= sizeof ranks - 16 ? ",..." : "", fig,
           (unsigned long long)g->sizes[s], AR_FAR_FACTOR);
}

/* Every rank's group, time and lateness at size s, into g->times; true when some rank would be late at the
 * next size (it would not fit before the deadline: this one's time scaled, one operation per placement at
 * least). */
static bool share_times(ar_group_gate *g, int s, const ar_sample *mine, int world)
{
    double next = 0;
    if (mine && s + 1 < g->n_sizes) {
        double per_op = mine->time_s[0] > mine->time_s[1] ? mine->time_s[0] : mine->time_s[1];
        next = per_op * (double)g->sizes[s + 1] / (double)(g->sizes[s] ? g->sizes[s] : 1) * AR_PLACEMENTS;
    }
    double v[SHARED] = {mine ? g->my_group : -1, mine ? mine->time_s[0] : 0,
                        g->deadline > 0 && ga_now() + next > g->deadline};
    if (!g->times)
        g->times = xcalloc((size_t)world * SHARED, sizeof *g->times);
    /* the ranks of fast groups wait here for the slowest group's size: its bound, not one wait's */
    if (g->size_bound > 0)
        ga_deadline_arm_for(g->size_bound, "sharing the groups' times of %llu B",
                            (unsigned long long)g->sizes[s]);
    else
        ga_deadline_arm("sharing the groups' times of %llu B", (unsigned long long)g->sizes[s]);
    GA_MPI_CHECK(MPI_Allgather(v, SHARED, MPI_DOUBLE, g->times, SHARED, MPI_DOUBLE, MPI_COMM_WORLD));
    ga_deadline_disarm();
    bool late = false;
    for (int r = 0; r < world; r++)
        late = late || g->times[r * SHARED + 2] != 0;
    return late;
}

/* Each group's busbw at size s (its time: its slowest rank's; its size: its ranks), then the earlier
 * sweeps' figures at this size after them: the peers. n_groups + n_prev figures, 0 for an empty group. */
static double *group_figures(const ar_group_gate *g, int s, int world, int n_prev)
{
    double *t = xcalloc((size_t)g->n_groups, sizeof *t);
    int *members = xcalloc((size_t)g->n_groups, sizeof *members);
    for (int r = 0; r < world; r++) {
        int k = (int)g->times[r * SHARED];
        if (k < 0 || k >= g->n_groups)
            continue;
        members[k]++;
        if (g->times[r * SHARED + 1] > t[k])
            t[k] = g->times[r * SHARED + 1];
    }
    double *fig = xcalloc((size_t)(g->n_groups + n_prev), sizeof *fig);
    ar_counts counts;
    for (int k = 0; k < g->n_groups; k++) {
        if (!members[k])
            continue;
        ar_coll_counts(g->coll, g->sizes[s], g->type, members[k], &counts);
        double alg;
        ar_coll_bandwidth(g->coll, ar_coll_bytes(&counts, g->type), t[k], members[k], &alg, &fig[k]);
    }
    for (int i = 0; i < n_prev; i++)
        fig[g->n_groups + i] = g->hist[s][i];
    free(t);
    free(members);
    return fig;
}

/* Marks the groups far below their peers; true when some group is judged. This sweep's figures then join
 * the history of size s. */
static bool judge_groups(ar_group_gate *g, int s, const double *fig, int n_prev, int world)
{
    bool *far = xcalloc((size_t)(g->n_groups + n_prev), sizeof *far);
    ar_far_below_peers(fig, g->n_groups + n_prev, far);
    bool any_judged = false;
    for (int k = 0; k < g->n_groups; k++) {
        /* Far below its peers twice (any sizes from AR_FAR_MIN_BYTES): it stays so at the larger sizes that
         * follow, one operation each; once is not enough, so that a moment of contention does not cost a
         * healthy group its precision. From the judging size on, twice far is judged. */
        if (far[k] && ar_far_counts_at(g->sizes[s])) { /* never from latency-bound sizes */
            if (++g->far_seen[k] >= AR_FAR_TIMES && !g->one_op[k]) {
                log_far(g, k, s, fig[k], world);
                g->one_op[k] = true;
            }
            if (s >= g->judge_from && ++g->far_count[k] >= AR_FAR_TIMES)
                g->judged[k] = true;
        }
        any_judged = any_judged || g->judged[k];
    }
    free(far);
    if (s < 64) {
        double *h = realloc(g->hist[s], (size_t)(n_prev + g->n_groups) * sizeof *h);
        if (!h)
            GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
        g->hist[s] = h;
        for (int k = 0; k < g->n_groups; k++)
            if (fig[k] > 0)
                h[g->n_hist[s]++] = fig[k];
    }
    return any_judged;
}

static int after_size(ar_gate *base, int s, const ar_sample *mine)
{
    ar_group_gate *g = (ar_group_gate *)base;
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    bool late = share_times(g, s, mine, world);
    int n_prev = s < 64 ? g->n_hist[s] : 0;
    double *fig = group_figures(g, s, world, n_prev);
    bool any_judged = judge_groups(g, s, fig, n_prev, world);
    free(fig);

    bool stop = late || (g->cut_on_judged && any_judged) || s == g->n_sizes - 1;
    if (stop && g->stopped_at < 0 && s < g->n_sizes - 1) {
        g->stopped_at = s;
        g->stopped_late = late;
        g->stopped_judged = !late;
    }
    int mine_group = g->my_group;
    bool in = mine_group >= 0 && mine_group < g->n_groups;
    return (stop ? AR_GATE_STOP : 0) | (in && g->one_op[mine_group] ? AR_GATE_ONE_OP : 0) |
           (in && g->judged[mine_group] ? AR_GATE_JUDGED : 0);
}

void ar_group_gate_init(ar_group_gate *g, ar_coll_id coll, ar_dtype type, const uint64_t *sizes, int n_sizes,
                        int judge_from, bool cut_on_judged, double deadline)
{
    memset(g, 0, sizeof *g);
    g->base.after_size = after_size;
    g->coll = coll;
    g->type = type;
    g->sizes = sizes;
    g->n_sizes = n_sizes;
    g->judge_from = judge_from;
    g->cut_on_judged = cut_on_judged;
    g->deadline = deadline;
    g->stopped_at = -1;
    g->my_group = -1;
}

void ar_group_gate_begin(ar_group_gate *g, int n_groups, int my_group)
{
    free(g->far_count);
    free(g->far_seen);
    free(g->one_op);
    free(g->judged);
    g->n_groups = n_groups;
    g->far_seen = xcalloc((size_t)n_groups, sizeof *g->far_seen);
    g->my_group = my_group;
    g->far_count = xcalloc((size_t)n_groups, sizeof *g->far_count);
    g->one_op = xcalloc((size_t)n_groups, sizeof *g->one_op);
    g->judged = xcalloc((size_t)n_groups, sizeof *g->judged);
    g->stopped_at = -1;
    g->stopped_late = g->stopped_judged = false;
}

bool ar_group_gate_judged(const ar_group_gate *g, int k)
{
    return k >= 0 && k < g->n_groups && g->judged[k];
}

void ar_group_gate_free(ar_group_gate *g)
{
    free(g->far_count);
    free(g->far_seen);
    free(g->one_op);
    free(g->judged);
    free(g->times);
    for (int s = 0; s < 64; s++)
        free(g->hist[s]);
    memset(g, 0, sizeof *g);
}
