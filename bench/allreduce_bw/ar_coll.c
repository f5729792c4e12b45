#include "ar_coll.h"

#include "ar_elem.h"

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

static const ar_coll colls[AR_NCOLLS] = {
    [AR_ALLREDUCE] = {"allreduce", true, false, counts_same, factor_allreduce, NULL, "none"},
    [AR_ALLGATHER] = {"allgather", false, false, counts_gathering, factor_n1, NULL, "none"},
    [AR_REDUCE_SCATTER] = {"reduce_scatter", true, false, counts_scattering, factor_n1, NULL, "none"},
    [AR_BROADCAST] = {"broadcast", false, true, counts_same, factor_one, NULL, "none"},
    [AR_REDUCE] = {"reduce", true, true, counts_same, factor_one, NULL, "none"},
    [AR_ALLTOALL] = {"alltoall", false, false, counts_alltoall, factor_n1, NULL, "none"},
    [AR_SENDRECV] = {"sendrecv", false, false, counts_same, factor_one, NULL, "none"},
    [AR_GATHER] = {"gather", false, true, counts_gathering, factor_n1, NULL, "none"},
    [AR_SCATTER] = {"scatter", false, true, counts_scattering, factor_n1, NULL, "none"},
    /* nccl-tests: algbw counts the (n-1) blocks a rank receives, busbw = algbw; its redop column is empty */
    [AR_HYPERCUBE] = {"hypercube", false, false, counts_gathering, factor_one, factor_n1, ""},
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

double ar_check_tolerance_ulps(ar_dtype type, ar_op op, int nranks)
{
    (void)nranks;
    return ar_elem_tolerance_ulps(type, op);
}

const char *ar_check_skip_reason(ar_dtype type, ar_op op)
{
    if (op == AR_AVG && ar_dtype_get(type)->fp8)
        return "fp8 avg is not checked: the rounding of 1/n-scaled fp8 values has no useful bound";
    return NULL;
}

void ar_fill_input(ar_coll_id id, const ar_pattern *p, int rank, void *buf)
{
    ar_elem_job j = ar_elem_job_of(id, p, rank);
    for (size_t i = 0; i < p->counts.send_count; i++)
        ar_elem_store(p->type, buf, i, ar_elem_input(&j, i));
}

int64_t ar_count_wrong(ar_coll_id id, const ar_pattern *p, int rank, const void *buf)
{
    ar_elem_job j = ar_elem_job_of(id, p, rank);
    double want;
    if (p->counts.recv_count == 0 || !ar_elem_expected(&j, 0, &want))
        return 0; /* nothing expected on this rank */
    int64_t wrong = 0;
    for (size_t k = 0; k < p->counts.recv_count; k++)
        wrong += ar_elem_wrong(&j, k, ar_elem_load(p->type, buf, k));
    return wrong;
}
