/* Host path: a STREAM triad (a = b + s*c, 3 x 8 bytes per element counted, as STREAM counts) on arrays bound
 * to the rank's NUMA node, run by the rank's share of the node's cores. The best repetition is the figure, as
 * in STREAM; the median is reported beside it. A repetition is timed by the CPU time of its threads (the
 * longest of them), as the GPU path times its work on the GPU: on a host shared with other processes, the
 * time the scheduler gave to another is not the memory's slowness. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_runtime.h"
#include "ga_stats.h"
#include "ga_testhook.h"
#include "ga_time.h"
#include "mb_backend.h"
#include "ga_devflag.h"
#include "ga_host.h"
#include "mb_triad.h"

typedef struct {
    double *a, *b, *c;
    size_t lo, hi;
    int reps;
    double slow_factor; /* the test hook: 1 unless set */
    pthread_barrier_t *start, *end;
    double *t_begin, *t_end; /* per repetition, this thread's own CPU clock readings */
} triad_worker;

static void *triad_thread(void *arg)
{
    triad_worker *w = arg;
    for (size_t j = w->lo; j < w->hi; j++) {
        w->a[j] = 0.0;
        w->b[j] = 1.0;
        w->c[j] = 2.0;
    }
    for (int r = 0; r < w->reps; r++) {
        pthread_barrier_wait(w->start);
        w->t_begin[r] = ga_thread_cpu_now();
        double *restrict a = w->a;
        const double *restrict b = w->b, *restrict c = w->c;
        for (size_t j = w->lo; j < w->hi; j++)
            a[j] = mb_triad_elem(b[j], c[j], MB_TRIAD_SCALAR);
        ga_test_slow_down(w->slow_factor, ga_thread_cpu_now() - w->t_begin[r], ga_thread_cpu_now);
        w->t_end[r] = ga_thread_cpu_now();
        pthread_barrier_wait(w->end);
    }
    return NULL;
}

void mb_fill_result(mb_result *x, double bytes, double *times, int reps)
{
    double med = ga_median(times, (size_t)reps); /* sorts: times[0] is the best */
    x->state = MB_MEASURED;
    x->bytes = bytes;
    x->reps = reps;
    x->best_s = times[0];
    x->median_s = med;
    x->GBps = times[0] > 0 ? bytes / times[0] / 1e9 : 0;
    x->median_GBps = med > 0 ? bytes / med / 1e9 : 0;
}

/* STREAM's rule: each array at least four times the last-level caches (shared by the node's ranks). */
static size_t triad_bytes(const mb_opts *o, int local_size)
{
    if (o->size)
        return o->size;
    size_t n_bytes = 4 * ga_host_llc_bytes() / (size_t)(local_size > 0 ? local_size : 1);
    return n_bytes < ((size_t)32 << 20) ? (size_t)32 << 20 : n_bytes;
}

/* T threads, each on its slice of the arrays, started together reps times; times[k]: repetition k's time. */
static void run_triad(double *a, double *b, double *c, size_t n, int T, int reps, double slow_factor,
                      triad_worker *w, pthread_t *tid, double *stamps, double *times)
{
    pthread_barrier_t start, end;
    pthread_barrier_init(&start, NULL, (unsigned)T + 1);
    pthread_barrier_init(&end, NULL, (unsigned)T + 1);
    int started = 0;
    for (int i = 0; i < T; i++) {
        w[i] = (triad_worker){a,
                              b,
                              c,
                              n * (size_t)i / (size_t)T,
                              n * (size_t)(i + 1) / (size_t)T,
                              reps,
                              slow_factor,
                              &start,
                              &end,
                              stamps + 2 * (size_t)reps * (size_t)i,
                              stamps + (2 * (size_t)i + 1) * (size_t)reps};
        if (pthread_create(&tid[i], NULL, triad_thread, &w[i]) != 0)
            break;
        started++;
    }
    if (started < T) {
        /* Barriers sized for T would never open: the threads that did start cannot be released cleanly. */
        GA_FATAL(GA_EXIT_ENV, "pthread_create failed after %d of %d triad threads", started, T);
    }
    for (int k = 0; k < reps; k++) {
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&end);
    }
    for (int i = 0; i < T; i++)
        pthread_join(tid[i], NULL);
    /* A repetition lasts as long as its slowest thread ran (the threads start together at the barrier), read
     * by the threads themselves: neither the main thread's scheduling nor another process's counts. */
    for (int k = 0; k < reps; k++) {
        times[k] = 0;
        for (int i = 0; i < T; i++)
            if (w[i].t_end[k] - w[i].t_begin[k] > times[k])
                times[k] = w[i].t_end[k] - w[i].t_begin[k];
    }
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&end);
}

int mb_host_measure(const mb_opts *o, int local_size, mb_record *r, char *err, size_t errlen)
{
    r->threads = o->threads > 0 ? o->threads : ga_host_threads(local_size);
    r->numa_node = ga_host_numa_node();
    size_t n = triad_bytes(o, local_size) / sizeof(double);
    r->buffer_bytes = (double)(n * sizeof(double));
    bool ba, bb, bc;
    double *a = ga_host_alloc_on_numa(n * sizeof(double), r->numa_node, &ba);
    double *b = ga_host_alloc_on_numa(n * sizeof(double), r->numa_node, &bb);
    double *c = ga_host_alloc_on_numa(n * sizeof(double), r->numa_node, &bc);
    r->numa_bound = a && b && c && ba && bb && bc;
    int T = r->threads, reps = o->reps;
    triad_worker *w = calloc((size_t)T, sizeof *w);
    pthread_t *tid = calloc((size_t)T, sizeof *tid);
    double *times = calloc((size_t)reps, sizeof *times);
    double *stamps = calloc(2 * (size_t)reps * (size_t)T, sizeof *stamps);
    int rc = 0;
    if (!a || !b || !c || !w || !tid || !times || !stamps) {
        snprintf(err, errlen, "out of memory: cannot allocate 3 x %zu bytes for the triad",
                 n * sizeof(double));
        rc = MB_OUT_OF_MEMORY;
        goto out;
    }
    ga_phase("host triad: 3 x %.0f MiB, %d threads, %d repetitions", r->buffer_bytes / 1048576.0, T, reps);
    run_triad(a, b, c, n, T, reps, o->slow_factor, w, tid, stamps, times);

    mb_result x = {0}; /* this measurement; r->t keeps them all (mb_result_add) */
    mb_fill_result(&x, 3.0 * (double)(n * sizeof(double)), times, reps);
    x.check_ok = 1;
    for (size_t j = 0; j < n; j += 4093)
        if (a[j] != mb_triad_elem(1.0, 2.0, MB_TRIAD_SCALAR))
            x.check_ok = 0;
    if (a[n - 1] != mb_triad_elem(1.0, 2.0, MB_TRIAD_SCALAR))
        x.check_ok = 0;
    mb_result_add(&r->t[MB_HOST_TRIAD], &x);
out:
    ga_host_free(a, n * sizeof(double), ba);
    ga_host_free(b, n * sizeof(double), bb);
    ga_host_free(c, n * sizeof(double), bc);
    free(w);
    free(tid);
    free(times);
    free(stamps);
    return rc;
}
