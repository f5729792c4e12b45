#include "ga_deadline.h"

#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_findings.h" /* GA_RESULT_REASONS_MAX */
#include "ga_job.h"      /* GA_HOST_MAX */
#include "ga_late.h"
#include "ga_str.h"
#include "ga_testhook.h"
#include "ga_time.h"

static struct {
    pthread_mutex_t lock;
    pthread_t thread;
    bool running, stop;
    double run_timeout, run_deadline; /* run_deadline 0: none */
    char phase[160];
    char progress[256];  /* how far the work got and at what rate (ga_progress), for a timeout's message */
    double wait_timeout; /* default bound of an armed wait, 0: none */
    bool wait_armed;
    double wait_deadline, wait_bound;
    char wait_what[256];
    bool hand_to_main;    /* an expiry is the main thread's first (ga_deadline_hand_expiry_to_main) */
    char handed_msg[512]; /* the expiry handed over, for ga_deadline_expiry_pending */
    long long seq;        /* waits armed so far: a rank behind the others has a lower count */
    double seq_at;        /* when the current wait was armed: how long the others have waited, at a timeout */
    bool starting;        /* before ga_deadline_start_run: MPI may not be up, no rank can be asked */
    char who[160];        /* this process as the launcher names it, while starting */
    int world_rank;       /* once MPI is up (ga_deadline_attach_mpi), for the stop hook; -1 before */
} dl = {.lock = PTHREAD_MUTEX_INITIALIZER, .phase = "start-up", .world_rank = -1};

/* Who did not arrive. A rank stopped or stuck outside MPI leaves every other rank blocked in the collective,
 * so only the watcher threads can find it: each keeps a receive posted on a communicator of their own and
 * answers a probe with its wait count. On expiry a watcher probes every other rank for a bounded time; the
 * ranks that did not answer, else those whose count is behind, are the ones named, by the lowest rank that
 * answered. Only with MPI_THREAD_MULTIPLE (the watcher calls MPI while the main thread is blocked in it). */
enum { TAG_PROBE = 7301, TAG_REPLY = 7302 };
#define PEER_POLL_S 2.0 /* how long an expired rank waits for the others' answers */
#define PEER_NAMED_MAX 8
/* An answer: the wait count, whether the rank has expired, and how long it has been in its current wait (ms;
 * 0 when it is in none), which says whether the others waited on a rank behind long enough to blame it. */
enum { REPLY_SEQ = 0, REPLY_EXPIRED = 1, REPLY_WAITED_MS = 2, REPLY_LEN = 3 };

static struct {
    bool enabled;
    pthread_mutex_t
        lock; /* the posted probe receive is tested by the watcher, and by a main thread expiring */
    MPI_Comm comm;
    int rank, size;
    char (*hosts)[GA_HOST_MAX];
    long long (*replies)[REPLY_LEN]; /* one answer buffer per asking rank: a send may outlive the call */
    MPI_Request probe_req;
    int probe_from;
} peers = {.lock = PTHREAD_MUTEX_INITIALIZER, .probe_req = MPI_REQUEST_NULL};

void ga_deadline_attach_mpi(const char *host, int world_rank, int world_size, int thread_level)
{
    dl.world_rank = world_rank;
    if (thread_level < MPI_THREAD_MULTIPLE || world_size < 2 || peers.enabled)
        return;
    peers.hosts = calloc((size_t)world_size, sizeof *peers.hosts);
    peers.replies = calloc((size_t)world_size, sizeof *peers.replies);
    if (!peers.hosts || !peers.replies) {
        free(peers.hosts);
        free(peers.replies);
        peers.hosts = NULL;
        peers.replies = NULL;
        return; /* the watchdog then names its own rank, as without peers */
    }
    char mine[GA_HOST_MAX];
    snprintf(mine, sizeof mine, "%s", host);
    /* Errors on this communicator are returned, not fatal: a probe to a rank that has already finished must
     * not take the job down with a message of its own instead of the timeout's. */
    if (MPI_Comm_dup(MPI_COMM_WORLD, &peers.comm) != MPI_SUCCESS ||
        MPI_Comm_set_errhandler(peers.comm, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        MPI_Allgather(mine, GA_HOST_MAX, MPI_CHAR, peers.hosts, GA_HOST_MAX, MPI_CHAR, peers.comm) !=
            MPI_SUCCESS) {
        free(peers.hosts);
        free(peers.replies);
        peers.hosts = NULL;
        peers.replies = NULL;
        return;
    }
    peers.rank = world_rank;
    peers.size = world_size;
    if (MPI_Irecv(&peers.probe_from, 1, MPI_INT, MPI_ANY_SOURCE, TAG_PROBE, peers.comm, &peers.probe_req) !=
        MPI_SUCCESS)
        return;
    peers.enabled = true;
}

/* Answers the probes that came in (watcher thread): this rank's wait count, whether it has expired, and how
 * long it has been in its current wait. */
static void answer_probes(long long seq, bool expired, double waited_s)
{
    int flag = 0;
    MPI_Status st;
    pthread_mutex_lock(&peers.lock);
    while (peers.probe_req != MPI_REQUEST_NULL && MPI_Test(&peers.probe_req, &flag, &st) == MPI_SUCCESS &&
           flag) {
        long long *reply = peers.replies[st.MPI_SOURCE];
        reply[REPLY_SEQ] = seq;
        reply[REPLY_EXPIRED] = expired;
        reply[REPLY_WAITED_MS] = (long long)(waited_s * 1000.0);
        MPI_Request r;
        /* Not waited for (the asker may be gone); its buffer is the asker's own slot, which outlives it. */
        if (MPI_Isend(reply, REPLY_LEN, MPI_LONG_LONG, st.MPI_SOURCE, TAG_REPLY, peers.comm, &r) ==
            MPI_SUCCESS)
            MPI_Request_free(&r);
        if (MPI_Irecv(&peers.probe_from, 1, MPI_INT, MPI_ANY_SOURCE, TAG_PROBE, peers.comm,
                      &peers.probe_req) != MPI_SUCCESS)
            peers.probe_req = MPI_REQUEST_NULL;
    }
    pthread_mutex_unlock(&peers.lock);
}

/* The late ranks in words: the silent ones (no answer) when there are any, else those named late (late[r]);
 * *late_rank the first of them. */
static void describe_late(int n, const bool *answered, const bool *late_r, long long (*got)[REPLY_LEN],
                          const ga_late_verdict *lv, bool silent, int *late_rank, char *text, size_t textlen)
{
    size_t len = (size_t)snprintf(text, textlen, "%s", silent ? "no answer within" : "behind the others:");
    if (silent)
        len += (size_t)snprintf(text + len, len < textlen ? textlen - len : 0, " %.0f s from", PEER_POLL_S);
    int listed = 0;
    *late_rank = -1;
    for (int r = 0; r < n; r++) {
        bool late = silent ? !answered[r] : late_r[r];
        if (!late)
            continue;
        if (*late_rank < 0)
            *late_rank = r;
        if (listed++ < PEER_NAMED_MAX && len < textlen) {
            if (silent)
                len += (size_t)snprintf(text + len, textlen - len, "%s rank %d (%s)", listed > 1 ? "," : "",
                                        r, peers.hosts[r]);
            else
                len +=
                    (size_t)snprintf(text + len, textlen - len, "%s rank %d (%s, at wait %lld of %lld)",
                                     listed > 1 ? "," : "", r, peers.hosts[r], got[r][REPLY_SEQ], lv->most);
        }
    }
    if (listed > PEER_NAMED_MAX && len < textlen)
        len += (size_t)snprintf(text + len, textlen - len, " and %d more", listed - PEER_NAMED_MAX);
    if (!silent && len < textlen)
        snprintf(text + len, textlen - len, "; the others waited %.1f s on it", lv->waited_s);
}

/* Probes every other rank and collects their answers into got[] for at most PEER_POLL_S, answering their
 * probes meanwhile. Returns how many answers are still outstanding (their requests stay in rq[]). */
static int probe_peers(long long my_seq, double my_waited, long long (*got)[REPLY_LEN], MPI_Request *rq,
                       bool *answered)
{
    int n = peers.size, me = peers.rank, pending = 0;
    for (int r = 0; r < n; r++) {
        rq[r] = MPI_REQUEST_NULL;
        if (r == me)
            continue;
        MPI_Request s;
        if (MPI_Irecv(got[r], REPLY_LEN, MPI_LONG_LONG, r, TAG_REPLY, peers.comm, &rq[r]) == MPI_SUCCESS)
            pending++;
        if (MPI_Isend(&peers.rank, 1, MPI_INT, r, TAG_PROBE, peers.comm, &s) == MPI_SUCCESS)
            MPI_Request_free(&s);
    }
    double until = ga_now() + PEER_POLL_S;
    while (pending > 0 && ga_now() < until) {
        answer_probes(my_seq, true, my_waited); /* the others ask too */
        for (int r = 0; r < n; r++) {
            int flag = 0;
            if (rq[r] != MPI_REQUEST_NULL && MPI_Test(&rq[r], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
                flag) {
                answered[r] = true;
                pending--;
            }
        }
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    answered[me] = true;
    got[me][REPLY_SEQ] = my_seq;
    got[me][REPLY_WAITED_MS] = (long long)(my_waited * 1000.0);
    return pending;
}

/* From the answers: whether this rank reports (the lowest rank that expired too does), and who is late by
 * the rule of ga_late.h. Returns true with text naming them; *none_behind with text saying why no rank is
 * named when every rank answered and none was behind long enough. */
static bool judge_answers(long long (*got)[REPLY_LEN], const bool *answered, double bound_s, bool *quiet,
                          bool *none_behind, int *late_rank, char *text, size_t textlen)
{
    int n = peers.size, me = peers.rank, reporter = me, silent = 0;
    ga_late_peer *p = calloc((size_t)n, sizeof *p);
    bool *late = calloc((size_t)n, sizeof *late);
    ga_late_verdict lv;
    bool ok = p && late;
    for (int r = 0; ok && r < n; r++) {
        p[r] = (ga_late_peer){answered[r], got[r][REPLY_SEQ], got[r][REPLY_WAITED_MS] / 1000.0};
        silent += !answered[r];
        if (answered[r] && r < reporter && got[r][REPLY_EXPIRED])
            reporter = r;
    }
    ok = ok && ga_late_judge(p, n, bound_s, late, &lv) == 0;
    bool found = false;
    if (!ok) {
        /* out of memory: the caller names its own rank */
    } else if (reporter != me) {
        *quiet = true; /* a lower rank expired too, heard the same, and reports */
    } else if (silent || lv.late) {
        /* Silent ranks first: a stopped or dead rank; else the ranks the others waited on long enough. */
        describe_late(n, answered, late, got, &lv, silent > 0, late_rank, text, textlen);
        found = true;
    } else if (lv.behind) {
        *none_behind = true; /* behind, but not for long: scheduling at the instant the bound fell */
        snprintf(
            text, textlen,
            "no rank far behind the others: %d of %d one or more waits behind (wait %lld reached by the "
            "rest), the others waiting %.1f s on them, under the %.1f s a rank is named after (max(%.0f s, "
            "%.0f%% of the %g s bound), at most half of it)",
            lv.behind, n, lv.most, lv.waited_s, lv.threshold_s, GA_LATE_MIN_S, 100.0 * GA_LATE_SHARE,
            bound_s);
    } else {
        /* every rank answered, none behind: they all waited at the same point, for work longer than the bound
         */
        *none_behind = true;
        snprintf(text, textlen, "no rank behind the others: all %d at wait %lld", n, lv.most);
    }
    free(p);
    free(late);
    return found;
}

/* On expiry: asks every other rank, for at most PEER_POLL_S, and names the late ones. Returns false when this
 * rank is not the one to report (*quiet: a lower rank that expired too answered, and reports), or when
 * nothing was learnt (then the caller names its own rank as before). On true, *late_rank is the first late
 * rank and text says who. */
static bool find_late_ranks(long long my_seq, double my_waited, double bound_s, bool *quiet,
                            bool *none_behind, int *late_rank, char *text, size_t textlen)
{
    *quiet = false;
    *none_behind = false;
    int n = peers.size;
    long long(*got)[REPLY_LEN] = calloc((size_t)n, sizeof *got);
    MPI_Request *rq = calloc((size_t)n, sizeof *rq);
    bool *answered = calloc((size_t)n, sizeof *answered);
    if (!got || !rq || !answered) {
        free(got);
        free(rq);
        free(answered);
        return false;
    }
    int pending = probe_peers(my_seq, my_waited, got, rq, answered);
    bool found = judge_answers(got, answered, bound_s, quiet, none_behind, late_rank, text, textlen);
    /* With answers outstanding, a late one may still arrive into got[] (rq[] holds its request): both are
     * left to the process, which is ending. */
    if (pending == 0) {
        free(got);
        free(rq);
    }
    free(answered);
    return found;
}

/* Set by whichever thread expires first (watcher or main thread); the other waits for the end. */
static atomic_flag expiring = ATOMIC_FLAG_INIT;
static atomic_bool expired_by_someone;
static atomic_bool handed_over; /* the watcher has published an expiry for the main thread */

/* The expiry: names the late rank(s) when the others can be asked, else this rank. Does not return. */
_Noreturn static void expire(const char *msg, long long seq, double waited_s, double bound_s)
{
    if (atomic_flag_test_and_set(&expiring))
        for (;;)
            pause();
    atomic_store(&expired_by_someone, true);
    char progress[sizeof dl.progress];
    pthread_mutex_lock(&dl.lock);
    snprintf(progress, sizeof progress, "%s", dl.progress);
    pthread_mutex_unlock(&dl.lock);
    if (peers.enabled) {
        bool quiet = false, none_behind = false;
        int late = -1;
        char text[700];
        if (find_late_ranks(seq, waited_s, bound_s, &quiet, &none_behind, &late, text, sizeof text))
            ga_fatal_for_at(peers.hosts[late], late, __FILE__, __LINE__, GA_EXIT_TIMEOUT,
                            "%s: %s; seen from rank %d on %s", msg, text, peers.rank,
                            peers.hosts[peers.rank]);
        /* No blame without evidence: the limit was too short for the work, which no node can be named for. */
        if (none_behind)
            ga_fatal_job_at(__FILE__, __LINE__, GA_EXIT_TIMEOUT, "%s: %s (reported by rank %d on %s)%s%s",
                            msg, text, peers.rank, peers.hosts[peers.rank], progress[0] ? "; " : "",
                            progress);
        if (quiet) {
            /* The lower rank's report takes the job down; if it cannot, this rank does, still quietly. */
            struct timespec wait = {5, 0};
            nanosleep(&wait, NULL);
            ga_fatal_quiet(GA_EXIT_TIMEOUT);
        }
    }
    GA_FATAL(GA_EXIT_TIMEOUT, "%s%s%s", msg, progress[0] ? "; " : "", progress);
}

void ga_deadline_check_before_commit(const char *tmp_path)
{
    pthread_mutex_lock(&dl.lock);
    bool late = dl.run_deadline > 0 && ga_now() > dl.run_deadline;
    char msg[512];
    snprintf(msg, sizeof msg, "timeout: --timeout %g s expired during '%s'", dl.run_timeout, dl.phase);
    pthread_mutex_unlock(&dl.lock);
    if (!late)
        return;
    unlink(tmp_path);
    GA_FATAL(GA_EXIT_TIMEOUT, "%s", msg);
}

/* The main thread acts on a handed-over expiry at its next poll (it aborts the communicator it alone uses,
 * then expires); one blocked inside a call that never returns is left behind after HANDOVER_S, and the
 * process exit takes its GPU work down. The watcher calls no library of the main thread's meanwhile. */
#define HANDOVER_S 1.0
static void wait_for_main_thread(void)
{
    atomic_store(&handed_over, true);
    for (double until = ga_now() + HANDOVER_S; ga_now() < until && !atomic_load(&expired_by_someone);) {
        struct timespec tick = {0, 10 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
}

/* Expiry before the start-up ended: MPI_Init, or the first exchanges of ga_init, did not complete on every
 * rank. MPI may be half up, so nothing of it is called: one line and _exit, which the launcher sees as a
 * rank that failed and so ends the job (the stopped rank with it). The rank that never arrived cannot be
 * named without MPI, so the line names none: "[FATAL] start-up:" leads with no host to blame. */
_Noreturn static void expire_starting(const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "[FATAL] start-up: %s; seen from %s, which cannot name the rank that did not start\n",
            msg, dl.who);
    fflush(stderr);
    char clipped[GA_RESULT_REASONS_MAX + 8]; /* between words, as the fatal path cuts it */
    ga_str_clip(clipped, sizeof clipped, msg, GA_RESULT_REASONS_MAX);
    printf("[RESULT] FAILURE: %s\n", clipped); /* the last line of every run, as the fatal path prints it */
    fflush(stdout);
    _exit(GA_EXIT_TIMEOUT);
}

static void *watch(void *arg)
{
    (void)arg;
    double nap = 0.0;
    for (;;) {
        struct timespec tick = {0, (long)(nap * 1e9)};
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&dl.lock);
        if (dl.stop) {
            pthread_mutex_unlock(&dl.lock);
            return NULL;
        }
        double now = ga_now();
        bool wait_expired = dl.wait_armed && now > dl.wait_deadline;
        bool run_expired = dl.run_deadline > 0 && now > dl.run_deadline;
        char msg[512];
        if (wait_expired)
            snprintf(msg, sizeof msg, "timeout: %s did not complete within %g s", dl.wait_what,
                     dl.wait_bound);
        else if (run_expired && dl.starting)
            snprintf(msg, sizeof msg,
                     "timeout: MPI_Init and the ranks' first exchanges did not complete within %g s",
                     dl.run_timeout);
        else if (run_expired)
            snprintf(msg, sizeof msg, "timeout: --timeout %g s expired during '%s'", dl.run_timeout,
                     dl.phase);
        bool starting = dl.starting;
        bool hand = dl.hand_to_main;
        if ((wait_expired || run_expired) && hand)
            snprintf(dl.handed_msg, sizeof dl.handed_msg, "%s", msg);
        long long seq = dl.seq;
        double waited = dl.wait_armed ? now - dl.seq_at : 0;
        /* the bound that fell: the wait's, else the whole run's */
        double bound = wait_expired ? dl.wait_bound : dl.run_timeout;
        /* Sleep until the nearest bound, but at most 50 ms, so that a bound armed meanwhile is seen. */
        nap = 0.05;
        if (dl.run_deadline > 0 && dl.run_deadline - now < nap)
            nap = dl.run_deadline - now;
        if (dl.wait_armed && dl.wait_deadline - now < nap)
            nap = dl.wait_deadline - now;
        nap = nap < 1e-4 ? 1e-4 : nap;
        pthread_mutex_unlock(&dl.lock);
        if (peers.enabled && !wait_expired && !run_expired)
            answer_probes(seq, false, waited);
        if (run_expired && starting)
            expire_starting(msg);
        if (wait_expired || run_expired) {
            if (hand)
                wait_for_main_thread();
            expire(msg, seq, waited, bound);
        }
    }
}

/* The watcher runs while any bound is set; started at most once. Caller holds no lock. */
static void ensure_watcher(void)
{
    pthread_mutex_lock(&dl.lock);
    bool start = !dl.running && !dl.stop && (dl.run_deadline > 0 || dl.wait_timeout > 0 || dl.wait_armed);
    if (start) {
        dl.stop = false;
        dl.running = pthread_create(&dl.thread, NULL, watch, NULL) == 0;
    }
    pthread_mutex_unlock(&dl.lock);
}

void ga_deadline_expired(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&dl.lock);
    long long seq = dl.seq;
    double waited = dl.wait_armed ? ga_now() - dl.seq_at : 0;
    double bound =
        dl.wait_armed ? dl.wait_bound : dl.run_timeout; /* a polling loop's own bound is unknown here */
    pthread_mutex_unlock(&dl.lock);
    expire(msg, seq, waited, bound);
}

double ga_deadline_run_end(void)
{
    pthread_mutex_lock(&dl.lock);
    double end = dl.run_deadline;
    pthread_mutex_unlock(&dl.lock);
    return end;
}

void ga_deadline_start_startup(double timeout_s, const char *who)
{
    pthread_mutex_lock(&dl.lock);
    dl.starting = timeout_s > 0;
    dl.run_timeout = timeout_s;
    dl.run_deadline = timeout_s > 0 ? ga_now() + timeout_s : 0;
    snprintf(dl.phase, sizeof dl.phase, "start-up (MPI_Init and the ranks' first exchanges)");
    snprintf(dl.who, sizeof dl.who, "%s", who);
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

void ga_deadline_start_run(double run_timeout_s)
{
    pthread_mutex_lock(&dl.lock);
    dl.starting = false;
    dl.run_timeout = run_timeout_s;
    dl.run_deadline = run_timeout_s > 0 ? ga_now() + run_timeout_s : 0;
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

void ga_deadline_set_wait_timeout(double wait_timeout_s)
{
    pthread_mutex_lock(&dl.lock);
    dl.wait_timeout = wait_timeout_s > 0 ? wait_timeout_s : 0;
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

double ga_deadline_wait_timeout(void)
{
    return dl.wait_timeout;
}

void ga_deadline_stop(void)
{
    pthread_mutex_lock(&dl.lock);
    bool running = dl.running;
    dl.stop = true;
    pthread_mutex_unlock(&dl.lock);
    if (running)
        pthread_join(dl.thread, NULL);
    dl.running = false;
    /* No probe can be answered from here on: the posted receive goes before MPI_Finalize. */
    if (peers.enabled) {
        peers.enabled = false;
        if (peers.probe_req != MPI_REQUEST_NULL) {
            MPI_Cancel(&peers.probe_req);
            MPI_Wait(&peers.probe_req, MPI_STATUS_IGNORE);
        }
        MPI_Comm_free(&peers.comm);
        free(peers.hosts);
        peers.hosts = NULL;
        /* peers.replies stays: an answer sent just before may still be in flight from it. */
    }
}

void ga_progress(const char *fmt, ...)
{
    char buf[sizeof dl.progress];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&dl.lock);
    memcpy(dl.progress, buf, sizeof buf);
    pthread_mutex_unlock(&dl.lock);
}

void ga_phase(const char *fmt, ...)
{
    char buf[sizeof dl.phase];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ga_test_stop_at_phase(dl.world_rank, buf); /* a test hook (ga_testhook.h) */
    pthread_mutex_lock(&dl.lock);
    memcpy(dl.phase, buf, sizeof buf);
    pthread_mutex_unlock(&dl.lock);
}

static void arm(double seconds, const char *fmt, va_list ap)
{
    if (seconds <= 0)
        return;
    pthread_mutex_lock(&dl.lock);
    vsnprintf(dl.wait_what, sizeof dl.wait_what, fmt, ap);
    dl.wait_deadline = ga_now() + seconds;
    dl.wait_bound = seconds;
    dl.wait_armed = true;
    dl.seq++;
    dl.seq_at = ga_now();
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

void ga_deadline_arm(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    arm(dl.wait_timeout, fmt, ap); /* no effect while the default is 0 */
    va_end(ap);
}

void ga_deadline_arm_for(double seconds, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    arm(seconds, fmt, ap);
    va_end(ap);
}

void ga_deadline_rearm(void)
{
    pthread_mutex_lock(&dl.lock);
    if (dl.wait_armed) {
        dl.wait_deadline = ga_now() + dl.wait_bound;
        dl.seq++;
        dl.seq_at = ga_now();
    }
    pthread_mutex_unlock(&dl.lock);
}

void ga_deadline_disarm(void)
{
    pthread_mutex_lock(&dl.lock);
    dl.wait_armed = false;
    pthread_mutex_unlock(&dl.lock);
}

void ga_deadline_hand_expiry_to_main(bool on)
{
    pthread_mutex_lock(&dl.lock);
    dl.hand_to_main = on;
    pthread_mutex_unlock(&dl.lock);
}

bool ga_deadline_expiry_pending(char *msg, size_t len)
{
    if (!atomic_load(&handed_over))
        return false;
    pthread_mutex_lock(&dl.lock);
    snprintf(msg, len, "%s", dl.handed_msg);
    pthread_mutex_unlock(&dl.lock);
    return true;
}
