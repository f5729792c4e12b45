/* The test hooks, one family read here alone: GPUACCEPT_TEST_<NAME> environment variables that let end-to-end
 * tests prove a check fails when it should (docs/testing.md, "Test hooks"). Never set in production runs.
 *   GPUACCEPT_TEST_SLOW_RANK=R, GPUACCEPT_TEST_SLOW_FACTOR=F  world rank R's timed work takes F times as long
 *       (host paths of gemm_flops, mem_bw, ddp_smoke; allreduce_bw's transfers): the outlier rule's power;
 *   GPUACCEPT_TEST_CORRUPT_RANK=R   gemm_flops' host path computes a wrong GEMM on rank R;
 *   GPUACCEPT_TEST_PERTURB_RANK=R   ddp_smoke moves one parameter of rank R's replica by one ulp;
 *   GPUACCEPT_TEST_WRONG_RANK=R     allreduce_bw corrupts one output element on rank R before the check;
 *   GPUACCEPT_TEST_DELAY_RANK=R, GPUACCEPT_TEST_DELAY_US=U  allreduce_bw's rank R is late by U us per
 * operation; the host paths of ddp_smoke and lm_train: rank R starts each training step U us late, asleep
 * (its compute is not slowed: the others wait on its gradients, as behind a slow link or a busy host);
 *   GPUACCEPT_TEST_GRAD_DELAY_US=U  the host paths of ddp_smoke and lm_train: every rank's wait for its
 * gradients takes U us more, asleep (a slow fabric: every rank waits alike);
 *   GPUACCEPT_TEST_SLOW_P2P=S,D with GPUACCEPT_TEST_SLOW_FACTOR=F  mem_bw --p2p's copy from world rank S to
 * world rank D takes F times as long (host path);
 *   GPUACCEPT_TEST_RANKS_PER_NODE=N  every N consecutive world ranks of one machine are a node of their own
 * (index, host name "<host>-nK"): several nodes on one machine, for the patterns across nodes (rails);
 *   GPUACCEPT_TEST_STOP_RANK=R, GPUACCEPT_TEST_STOP_PHASE=P  world rank R stops itself (SIGSTOP) when it
 * enters a phase (ga_phase) whose name starts with P: a rank frozen at a known point, whatever the load. Pure
 * apart from the clock and the environment. */
#ifndef GA_TESTHOOK_H
#define GA_TESTHOOK_H

#include <stdbool.h>

#define GA_TEST_PREFIX "GPUACCEPT_TEST_"
#define GA_TEST_SLOW_RANK_ENV GA_TEST_PREFIX "SLOW_RANK"
#define GA_TEST_SLOW_FACTOR_ENV GA_TEST_PREFIX "SLOW_FACTOR"

/* GPUACCEPT_TEST_<name> as an integer, fallback when it is unset or empty. */
long ga_test_int(const char *name, long fallback);

/* Whether GPUACCEPT_TEST_<name> names world_rank (unset: no rank is named). */
bool ga_test_names_rank(const char *name, int world_rank);

/* F for world_rank when the hook names it, else 1. A factor that is not a number from 1 to 1000 is ignored
 * (1) with one warning on stderr from the rank it names. */
double ga_test_slow_factor(int world_rank);

/* Timed work that took elapsed_s seconds by clock (ga_thread_cpu_now: the clock the host paths time their
 * work by) is made to take factor times as long: this thread works on, spinning, until clock has advanced
 * by (factor - 1) * elapsed_s more, as slower cores would have. No effect at factor 1. */
void ga_test_slow_down(double factor, double elapsed_s, double (*clock)(void));

/* F for the copy from world rank src to dst when GPUACCEPT_TEST_SLOW_P2P names them, else 1 (a factor that
 * is not a number from 1 to 1000: 1). */
double ga_test_p2p_factor(int src, int dst);

/* N of GPUACCEPT_TEST_RANKS_PER_NODE, 0 when unset or not a positive number. */
int ga_test_ranks_per_node(void);

/* The delay hook: seconds world_rank starts each unit of work late (0 unless GPUACCEPT_TEST_DELAY_RANK names
 * it and GPUACCEPT_TEST_DELAY_US is positive); ga_test_delay sleeps them (no CPU time spent). */
double ga_test_delay_s(int world_rank);
/* Seconds every rank's wait for its gradients takes more (GPUACCEPT_TEST_GRAD_DELAY_US; 0 unset), read once.
 */
double ga_test_comm_delay_s(void);
void ga_test_delay(double seconds);

/* The stop hook: SIGSTOP to this process, for ever, when GPUACCEPT_TEST_STOP_RANK names world_rank and phase
 * starts with GPUACCEPT_TEST_STOP_PHASE (read once). Called by ga_phase. */
void ga_test_stop_at_phase(int world_rank, const char *phase);

#endif
