#include "ar_coll.h"

#include <math.h>
#include <string.h>

/* ---- data: every reduction's exact result is known, whatever the order of the reduction ----
 * Reductions: element i has a marked value a(i) in {1,2,3} on rank i % n and a second mark on rank
 * (i + 1) % n; every other rank holds the operation's neutral filler, so partial results stay small
 * integers, exact in every type (fp8 e5m2 included) and for any number of ranks. avg of floats: the marks of
 * sum (two ranks contribute, as nccl-tests' avg data): NCCL pre-multiplies every input by 1/n in the type and
 * adds, and with only two non-zero terms the result is within 3 ULPs of (a + 1) / n whatever n is; with every
 * rank contributing, a bf16 or half sum of n rounded terms drifts by up to n ULPs. avg of integers: every
 * rank holds a(i) (the sum wraps, then divides). Data movement: rank r's element i is a small integer of r
 * and i, exact in the type. */

static double mark(const ar_pattern *p, size_t i)
{
    return (double)(1 + (i + p->seed) % 3);
}

static double reduce_input(const ar_pattern *p, int rank, size_t i)
{
    size_t n = (size_t)p->nranks;
    bool first = (size_t)rank == i % n;
    bool second = n > 1 && (size_t)rank == (i + 1) % n;
    double a = mark(p, i);
    switch (p->op) {
    case AR_SUM:
        return (first ? a : 0) + (second ? 1 : 0);
    case AR_PROD:
        return (first ? a : 1) * (second ? 2 : 1);
    case AR_MIN:
        return first ? a : (second ? 3 : 4);
    case AR_MAX:
        return first ? a : (second ? 1 : 0);
    default: /* avg */
        if (ar_dtype_get(p->type)->is_float)
            return (first ? a : 0) + (second ? 1 : 0);
        return a;
    }
}

/* Two's complement wrap of v to the width and signedness of an integer type. */
static int64_t wrap_int(ar_dtype t, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case AR_INT8:
        return (int8_t)(uint8_t)u;
    case AR_UINT8:
        return (uint8_t)u;
    case AR_INT32:
        return (int32_t)(uint32_t)u;
    case AR_UINT32:
        return (uint32_t)u;
    default:
        return v;
    }
}

static double reduce_expected_at(const ar_pattern *p, size_t i)
{
    double a = mark(p, i);
    bool two = p->nranks > 1;
    switch (p->op) {
    case AR_SUM:
        return a + (two ? 1 : 0);
    case AR_PROD:
        return a * (two ? 2 : 1);
    case AR_MIN:
    case AR_MAX:
        return a;
    default:
        if (ar_dtype_get(p->type)->is_float)
            return (a + (two ? 1 : 0)) / p->nranks;
        /* integer avg: the sum wraps in the type, then divides (truncating), as NCCL's and our host's do */
        return (double)(wrap_int(p->type, (int64_t)a * p->nranks) / p->nranks);
    }
}

static double data_value(const ar_pattern *p, int rank, size_t i)
{
    int64_t limit = ar_dtype_get(p->type)->exact_max;
    if (limit > (1 << 20))
        limit = 1 << 20;
    return (double)(1 + ((uint64_t)rank * 7u + (uint64_t)i * 3u + p->seed) % (uint64_t)limit);
}

/* ---- counts and bandwidth factors (nccl-tests' getCollByteCount and getBw) ---- */

static void counts_same(size_t count, size_t esize, int nranks, ar_counts *c)
{
    (void)esize;
    (void)nranks;
    *c = (ar_counts){count, count, count, 0, 0};
}

/* The per-rank count of the collectives that split the size among ranks, rounded down to a multiple of 16
 * bytes as nccl-tests rounds it, so that the size and count columns are nccl-tests' for every size. */
static size_t per_rank(size_t count, size_t esize, int nranks)
{
    size_t per = count / (size_t)nranks;
    size_t align = esize < 16 ? 16 / esize : 1;
    return per & ~(align - 1);
}

/* allgather, gather and hypercube: each rank sends per, receives per x n; in place, rank r's input is at
 * recvbuf + r x per. */
static void counts_gathering(size_t count, size_t esize, int nranks, ar_counts *c)
{
    size_t per = per_rank(count, esize, nranks);
    *c = (ar_counts){per, per * (size_t)nranks, per, per, 0};
}

/* reduce_scatter and scatter: each rank sends per x n, receives per; in place, rank r's output is at
 * recvbuf + r x per. */
static void counts_scattering(size_t count, size_t esize, int nranks, ar_counts *c)
{
    size_t per = per_rank(count, esize, nranks);
    *c = (ar_counts){per * (size_t)nranks, per, per, 0, per};
}

static void counts_alltoall(size_t count, size_t esize, int nranks, ar_counts *c)
{
    size_t per = per_rank(count, esize, nranks);
    *c = (ar_counts){per * (size_t)nranks, per * (size_t)nranks, per, 0, 0};
}

static double factor_allreduce(int n)
{
    return 2.0 * (n - 1) / n;
}

static double factor_n1(int n)
{
    return (double)(n - 1) / n;
}

static double factor_one(int n)
{
    (void)n;
    return 1.0;
}

static bool power_of_two(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* ---- inputs and expected outputs per collective ---- */

static bool expect_reduce_full(const ar_pattern *p, int rank, size_t j, double *v)
{
    (void)rank;
    *v = reduce_expected_at(p, j);
    return true;
}

static bool expect_reduce_root(const ar_pattern *p, int rank, size_t j, double *v)
{
    if (rank != p->root)
        return false;
    *v = reduce_expected_at(p, j);
    return true;
}

static bool expect_reduce_scatter(const ar_pattern *p, int rank, size_t j, double *v)
{
    *v = reduce_expected_at(p, (size_t)rank * p->counts.recv_count + j);
    return true;
}

static bool expect_allgather(const ar_pattern *p, int rank, size_t j, double *v)
{
    (void)rank;
    size_t per = p->counts.send_count;
    *v = data_value(p, (int)(j / per), j % per);
    return true;
}

static bool expect_broadcast(const ar_pattern *p, int rank, size_t j, double *v)
{
    (void)rank;
    *v = data_value(p, p->root, j);
    return true;
}

static bool expect_alltoall(const ar_pattern *p, int rank, size_t j, double *v)
{
    size_t per = p->counts.param_count;
    *v = data_value(p, (int)(j / per), (size_t)rank * per + j % per);
    return true;
}

static bool expect_sendrecv(const ar_pattern *p, int rank, size_t j, double *v)
{
    *v = data_value(p, (rank - 1 + p->nranks) % p->nranks, j);
    return true;
}

static bool expect_gather(const ar_pattern *p, int rank, size_t j, double *v)
{
    if (rank != p->root)
        return false;
    return expect_allgather(p, rank, j, v);
}

static bool expect_scatter(const ar_pattern *p, int rank, size_t j, double *v)
{
    *v = data_value(p, p->root, (size_t)rank * p->counts.recv_count + j);
    return true;
}

static const ar_coll colls[AR_NCOLLS] = {
    [AR_ALLREDUCE] = {"allreduce", true, false, counts_same, factor_allreduce, NULL, "none", reduce_input,
                      expect_reduce_full},
    [AR_ALLGATHER] = {"allgather", false, false, counts_gathering, factor_n1, NULL, "none", data_value,
                      expect_allgather},
    [AR_REDUCE_SCATTER] = {"reduce_scatter", true, false, counts_scattering, factor_n1, NULL, "none",
                           reduce_input, expect_reduce_scatter},
    [AR_BROADCAST] = {"broadcast", false, true, counts_same, factor_one, NULL, "none", data_value,
                      expect_broadcast},
    [AR_REDUCE] = {"reduce", true, true, counts_same, factor_one, NULL, "none", reduce_input,
                   expect_reduce_root},
    [AR_ALLTOALL] = {"alltoall", false, false, counts_alltoall, factor_n1, NULL, "none", data_value,
                     expect_alltoall},
    [AR_SENDRECV] = {"sendrecv", false, false, counts_same, factor_one, NULL, "none", data_value,
                     expect_sendrecv},
    [AR_GATHER] = {"gather", false, true, counts_gathering, factor_n1, NULL, "none", data_value,
                   expect_gather},
    [AR_SCATTER] = {"scatter", false, true, counts_scattering, factor_n1, NULL, "none", data_value,
                    expect_scatter},
    /* nccl-tests: algbw counts the (n-1) blocks a rank receives, busbw = algbw; its redop column is empty */
    [AR_HYPERCUBE] = {"hypercube", false, false, counts_gathering, factor_one, factor_n1, "", data_value,
                      expect_allgather},
};

const char *ar_coll_op_label(ar_coll_id id, ar_op op)
{
    return colls[id].reduces ? ar_op_name(op) : colls[id].no_op_name;
}

const char *ar_coll_unsupported(ar_coll_id id, int nranks)
{
    if (id == AR_HYPERCUBE && !power_of_two(nranks))
        return "hypercube needs a power-of-two number of ranks";
    return NULL;
}

const ar_coll *ar_coll_get(ar_coll_id id)
{
    return &colls[id];
}

int ar_coll_parse(const char *name, ar_coll_id *out)
{
    for (int c = 0; c < AR_NCOLLS; c++)
        if (strcmp(name, colls[c].name) == 0) {
            *out = (ar_coll_id)c;
            return 0;
        }
    /* nccl-tests' binary names, without the _perf */
    static const struct {
        const char *alias;
        ar_coll_id id;
    } aliases[] = {{"all_reduce", AR_ALLREDUCE},         {"all_gather", AR_ALLGATHER},
                   {"reducescatter", AR_REDUCE_SCATTER}, {"alltoall", AR_ALLTOALL},
                   {"send_recv", AR_SENDRECV},           {"bcast", AR_BROADCAST}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].alias) == 0) {
            *out = aliases[i].id;
            return 0;
        }
    return -1;
}

void ar_coll_counts(ar_coll_id id, size_t size_bytes, ar_dtype type, int nranks, ar_counts *out)
{
    size_t esize = ar_dtype_get(type)->size;
    colls[id].counts(size_bytes / esize, esize, nranks, out);
}

size_t ar_coll_bytes(const ar_counts *c, ar_dtype type)
{
    size_t n = c->send_count > c->recv_count ? c->send_count : c->recv_count;
    return n * ar_dtype_get(type)->size;
}

void ar_coll_bandwidth(ar_coll_id id, size_t bytes, double time_s, int nranks, double *algbw, double *busbw)
{
    double share = colls[id].alg_factor ? colls[id].alg_factor(nranks) : 1.0;
    *algbw = time_s > 0 ? (double)bytes * share / 1e9 / time_s : 0.0;
    *busbw = *algbw * colls[id].bus_factor(nranks);
}

/* avg of floats: two rounded products (x / n, with 1/n itself rounded) and their rounded sum are within 3
 * units of the last place of the exact (a + 1) / n, whatever n (see the data above); nccl-tests allows 2 for
 * its own rounding of the expected value. */
double ar_check_tolerance_ulps(ar_dtype type, ar_op op, int nranks)
{
    (void)nranks;
    return op == AR_AVG && ar_dtype_get(type)->is_float ? 3.0 : 0.0;
}

const char *ar_check_skip_reason(ar_dtype type, ar_op op)
{
    if (op == AR_AVG && ar_dtype_get(type)->fp8)
        return "fp8 avg is not checked: the rounding of 1/n-scaled fp8 values has no useful bound";
    return NULL;
}

void ar_fill_input(ar_coll_id id, const ar_pattern *p, int rank, void *buf)
{
    double (*input)(const ar_pattern *, int, size_t) = colls[id].input;
    for (size_t i = 0; i < p->counts.send_count; i++)
        ar_store(p->type, buf, i, input(p, rank, i));
}

int64_t ar_count_wrong(ar_coll_id id, const ar_pattern *p, int rank, const void *buf)
{
    double tol = ar_check_tolerance_ulps(p->type, p->op, p->nranks);
    int64_t wrong = 0;
    double want;
    for (size_t j = 0; j < p->counts.recv_count; j++) {
        if (!colls[id].expected(p, rank, j, &want))
            return 0;
        double got = ar_load(p->type, buf, j);
        if (got != want && !(tol > 0 && ar_ulps(p->type, got, want) <= tol))
            wrong++;
    }
    return wrong;
}
