/* The check's indexing of A (gf_a_index, what check_kernel reads A through): for either layout, the dot
 * products it forms from A as stored must be the product C = op(A) B that cuBLASLt is asked for, and reading
 * one layout's storage with the other's index must not be (a wrong index would flag every GEMM, or pass a
 * wrong one). The GPU double never runs check_kernel's arithmetic, so this is where the index is proven. */
#include <math.h>

#include "gf_random.h"
#include "ga_test.h"

enum { M = 5, N = 3, K = 7 };

/* Element (row, p) of the logical m x k left factor. */
static double a_at(int64_t row, int64_t p)
{
    return (double)gf_int8(42, 1, (uint64_t)(row * K + p));
}

/* B stored column-major k x n (ldb k), as both layouts keep it. */
static double b_at(int64_t p, int64_t col)
{
    return (double)gf_int8(42, 2, (uint64_t)(col * K + p));
}

/* The check's dot product for C(row, col), A read from `stored` through the index of layout nn. */
static double check_dot(const double *stored, int nn, int64_t row, int64_t col)
{
    double s = 0;
    for (int64_t p = 0; p < K; p++)
        s += stored[gf_a_index(nn, row, p, M, K)] * b_at(p, col);
    return s;
}

int main(void)
{
    double tn[M * K], nn[M * K]; /* TN: A^T column-major (k x m, lda k); NN: A column-major (m x k, lda m) */
    for (int64_t row = 0; row < M; row++)
        for (int64_t p = 0; p < K; p++) {
            tn[row * K + p] = a_at(row, p);
            nn[p * M + row] = a_at(row, p);
        }
    int wrong_tn_on_nn = 0, wrong_nn_on_tn = 0;
    for (int64_t row = 0; row < M; row++)
        for (int64_t col = 0; col < N; col++) {
            double c = 0;
            for (int64_t p = 0; p < K; p++)
                c += a_at(row, p) * b_at(p, col);
            CHECKF(check_dot(tn, 0, row, col) == c, "TN C(%lld,%lld)", (long long)row, (long long)col);
            CHECKF(check_dot(nn, 1, row, col) == c, "NN C(%lld,%lld)", (long long)row, (long long)col);
            wrong_tn_on_nn += check_dot(nn, 0, row, col) != c;
            wrong_nn_on_tn += check_dot(tn, 1, row, col) != c;
        }
    /* the two layouts are told apart: the other layout's index gives wrong elements */
    CHECK(wrong_tn_on_nn > M * N / 2);
    CHECK(wrong_nn_on_tn > M * N / 2);
    return ga_test_finish();
}
