/* The test hook for the power of the outlier rule (docs/testing.md, "Test hooks"): GPUACCEPT_TEST_SLOW_RANK=R
 * with GPUACCEPT_TEST_SLOW_FACTOR=F makes the timed work of world rank R take F times as long, on the host
 * paths of gemm_flops, mem_bw and ddp_smoke. It is read here alone, so that every program means the same by
 * it. Never set it in production runs. Pure apart from the clock and the environment. */
#ifndef GA_TESTHOOK_H
#define GA_TESTHOOK_H

#define GA_TEST_SLOW_RANK_ENV "GPUACCEPT_TEST_SLOW_RANK"
#define GA_TEST_SLOW_FACTOR_ENV "GPUACCEPT_TEST_SLOW_FACTOR"

/* F for world_rank when the hook names it, else 1. A factor that is not a number from 1 to 1000 is ignored
 * (1) with one warning on stderr from the rank it names. */
double ga_test_slow_factor(int world_rank);

/* Timed work that took elapsed_s seconds by clock (ga_thread_cpu_now: the clock the host paths time their
 * work by) is made to take factor times as long: this thread works on, spinning, until clock has advanced
 * by (factor - 1) * elapsed_s more, as slower cores would have. No effect at factor 1. */
void ga_test_slow_down(double factor, double elapsed_s, double (*clock)(void));

#endif
