/* The per-element maths shared by the host check and the device check (ar_elem.h, issue 44): the types as
 * the kernels see them agree with ar_types.c's table; every reduction's expected value is exact in every type
 * up to 32768 ranks (4096 nodes x 8), reduced in the type in any order, avg within its stated ULPs; a job is
 * the host path's pattern; a wrong element is counted. The GPU runs these same functions (ar_check.cu). */
#include <stdio.h>
#include <string.h>

#include "ar_elem.h"
#include "ga_test.h"

static double round_to(int t, double v)
{
    unsigned char tmp[8];
    ar_elem_store(t, tmp, 0, v);
    return ar_elem_load(t, tmp, 0);
}

static void check_types_agree(void)
{
    for (int t = 0; t < AR_NTYPES; t++) {
        const ar_dtype_info *d = ar_dtype_get((ar_dtype)t);
        int e, m;
        ar_elem_layout(t, &e, &m);
        CHECKF(ar_elem_is_float(t) == d->is_float && e == d->exp_bits && m == d->man_bits, "%s layout",
               d->name);
        int64_t limit = d->exact_max < (1 << 20) ? d->exact_max : (1 << 20);
        CHECKF(ar_elem_data_limit(t) == limit, "%s data limit %lld", d->name,
               (long long)ar_elem_data_limit(t));
        CHECKF(ar_elem_tolerance_ulps(t, AR_AVG) == ar_check_tolerance_ulps((ar_dtype)t, AR_AVG, 8), "%s tol",
               d->name);
    }
    CHECK(sizeof(ar_elem_job) ==
          48); /* six words of a launch's arguments: the double's stand-ins read them */
}

/* Element i reduced over n ranks in the type, ranks taken from `first` on (a ring's order), rounded at every
 * step as a GPU's reduction does; avg as NCCL's pre-multiplied sum for floats. */
static double reduce_in_type(const ar_elem_job *j, uint64_t i, int first)
{
    int t = j->type, n = j->nranks;
    bool fl = ar_elem_is_float(t), avg = j->op == AR_AVG;
    double scale = round_to(t, 1.0 / n), acc = 0;
    for (int k = 0; k < n; k++) {
        double v = round_to(t, ar_elem_reduce_input(j, (first + k) % n, i));
        if (avg && fl)
            v = round_to(t, v * scale);
        if (k == 0)
            acc = v;
        else if (j->op == AR_SUM || avg)
            acc = round_to(t, acc + v);
        else if (j->op == AR_PROD)
            acc = round_to(t, acc * v);
        else
            acc = j->op == AR_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
    }
    if (avg && !fl) /* the integer sum wraps in the type (round_to wraps), then divides */
        return (double)((int64_t)acc / n);
    return acc;
}

static void check_exact_at_scale(void)
{
    const int ranks[] = {1, 2, 3, 8, 16, 1000, 4096, 32768};
    for (int t = 0; t < AR_NTYPES; t++)
        for (int op = 0; op < AR_NOPS; op++)
            for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
                if (ar_check_skip_reason((ar_dtype)t, (ar_op)op))
                    continue; /* fp8 avg: not checked, said so */
                ar_elem_job j = {AR_ALLREDUCE, (uint8_t)t, (uint8_t)op, 0, ranks[ri], 0, 0, 5, 0, 16, 16, 16};
                int64_t wrong = 0;
                for (uint64_t i = 0; i < 6; i++) /* every mark, every position of the marked ranks */
                    for (int first = 0; first < 2; first++) {
                        double got =
                            reduce_in_type(&j, i + (uint64_t)ranks[ri] / 2, first ? ranks[ri] - 1 : 0);
                        wrong += ar_elem_wrong(&j, i + (uint64_t)ranks[ri] / 2, got);
                    }
                CHECKF(wrong == 0, "%s %s n=%d: %lld wrong", ar_dtype_get((ar_dtype)t)->name,
                       ar_op_name((ar_op)op), ranks[ri], (long long)wrong);
                double want;
                ar_elem_expected(&j, 1, &want);
                CHECKF(ar_elem_wrong(&j, 1, want * 2 + 1), "%s %s: a wrong value passes",
                       ar_dtype_get((ar_dtype)t)->name, ar_op_name((ar_op)op));
                if (op != AR_AVG || !ar_elem_is_float(t))
                    CHECK(ar_elem_tolerance_ulps(t, op) == 0); /* exact: not one ULP allowed */
            }
}

/* The host path fills and counts through the same functions as the kernels, for every collective. */
static void check_host_path_is_the_job(void)
{
    for (int c = 0; c < AR_NCOLLS; c++) {
        ar_pattern p = {AR_BFLOAT16, AR_SUM, 4, 1, 9, {0}};
        ar_coll_counts((ar_coll_id)c, 256, p.type, p.nranks, &p.counts);
        uint16_t in[128], out[512];
        for (int r = 0; r < p.nranks; r++) {
            ar_elem_job j = ar_elem_job_of((ar_coll_id)c, &p, r);
            ar_fill_input((ar_coll_id)c, &p, r, in);
            for (uint64_t i = 0; i < p.counts.send_count; i++)
                CHECK(ar_load(p.type, in, i) == ar_elem_input(&j, i));
            double v;
            bool expects = ar_elem_expected(&j, 0, &v);
            for (uint64_t k = 0; k < p.counts.recv_count; k++) {
                ar_elem_expected(&j, k, &v);
                ar_store(p.type, out, k, v);
            }
            CHECKF(ar_count_wrong((ar_coll_id)c, &p, r, out) == 0, "%s rank %d", ar_coll_get(c)->name, r);
            ar_store(p.type, out, 3, 100);
            CHECKF(ar_count_wrong((ar_coll_id)c, &p, r, out) == (expects ? 1 : 0), "%s rank %d corrupted",
                   ar_coll_get(c)->name, r);
        }
    }
}

int main(void)
{
    check_types_agree();
    check_exact_at_scale();
    check_host_path_is_the_job();
    return ga_test_finish();
}
