/* --algos' choice among cuBLASLt's candidates (gf_fastest_candidate, what gf_gpu.cu keeps): the fastest that
 * ran, but the heuristic's first unless another beats it by more than the margin, so that timing noise
 * between identical GPUs does not pick different algorithms for nothing. */
#include "gf_backend.h"
#include "ga_test.h"

int main(void)
{
    const double margin = 0.01;
    double clear[] = {1.00, 0.97, 0.99}; /* 3 % faster: kept */
    CHECK(gf_fastest_candidate(clear, 3, margin) == 1);
    double noise[] = {1.00, 0.995, 1.02}; /* 0.5 % faster: the first stays */
    CHECK(gf_fastest_candidate(noise, 3, margin) == 0);
    double first_failed[] = {-1, 1.00, 0.998}; /* no first to stay with: the fastest that ran */
    CHECK(gf_fastest_candidate(first_failed, 3, margin) == 2);
    double none[] = {-1, -1};
    CHECK(gf_fastest_candidate(none, 2, margin) == -1);
    double one[] = {0.5};
    CHECK(gf_fastest_candidate(one, 1, margin) == 0);
    return ga_test_finish();
}
