/* Unit tests of ddp_smoke's pure parts: gradients against finite differences, bucket plans, the sampler's
 * sharding, parameter digests, the IDX reader and the optimiser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddp_bucket.h"
#include "ddp_analysis.h"
#include "ddp_data.h"
#include "ddp_host_math.h"
#include "ddp_model.h"
#include "ddp_optim.h"
#include "ddp_rng.h"
#include "ga_test.h"

static double batch_loss(ddp_host_net *net, const double *params, const float *x, const int32_t *y,
                         double *grad)
{
    ddp_host_forward_backward(net, params, x, y, net->batch, grad, NULL, NULL);
    return grad[net->m->n_params + DDP_STAT_LOSS];
}

/* Every analytic gradient against a central difference of the mean loss. */
static void test_gradients(void)
{
    ddp_layout m;
    char err[128];
    CHECKF(ddp_layout_init(&m, 5, 7, 2, 4, err, sizeof err) == 0, "%s", err);
    CHECKF(m.n_params == 5 * 7 + 7 + 7 * 7 + 7 + 7 * 4 + 4, "n_params %zu", m.n_params);
    const int B = 6;
    ddp_host_net net;
    CHECKF(ddp_host_net_init(&net, &m, B) == 0, "net init");
    double *p = malloc(m.n_params * sizeof *p), *g = malloc(m.n_grad * sizeof *g),
           *scratch = malloc(m.n_grad * sizeof *scratch);
    ddp_params_init(&m, 7, p);
    ddp_rng r = ddp_rng_for(3, 9, 0);
    for (size_t k = 0; k < m.n_params; k++)
        p[k] += 0.1 * ddp_rng_normal(&r); /* nonzero biases too */
    float x[6 * 5];
    int32_t y[6];
    for (int k = 0; k < B * 5; k++)
        x[k] = (float)ddp_rng_normal(&r);
    for (int b = 0; b < B; b++)
        y[b] = b % 4;
    batch_loss(&net, p, x, y, g);
    double worst = 0;
    for (size_t k = 0; k < m.n_params; k++) {
        const double h = 1e-6, keep = p[k];
        p[k] = keep + h;
        double up = batch_loss(&net, p, x, y, scratch);
        p[k] = keep - h;
        double down = batch_loss(&net, p, x, y, scratch);
        p[k] = keep;
        double num = (up - down) / (2 * h), err_k = fabs(num - g[k]) / fmax(1e-4, fabs(num) + fabs(g[k]));
        if (err_k > worst)
            worst = err_k;
    }
    CHECKF(worst < 1e-5, "worst relative gradient error %g", worst);

    /* The loss share of half the batch, computed against the full batch size, sums to the full loss. */
    ddp_host_net half;
    CHECKF(ddp_host_net_init(&half, &m, B / 2) == 0, "half net");
    double full = batch_loss(&net, p, x, y, g);
    ddp_host_forward_backward(&half, p, x, y, B, scratch, NULL, NULL);
    double a = scratch[m.n_params + DDP_STAT_LOSS], gw0 = scratch[0];
    ddp_host_forward_backward(&half, p, x + (B / 2) * 5, y + B / 2, B, scratch, NULL, NULL);
    double b = scratch[m.n_params + DDP_STAT_LOSS];
    CHECKF(fabs(a + b - full) < 1e-12, "shares %g + %g != %g", a, b, full);
    CHECKF(fabs(gw0 + scratch[0] - g[0]) < 1e-12, "gradient shares do not sum to the full-batch gradient");
    ddp_host_net_free(&half);
    ddp_host_net_free(&net);
    free(p);
    free(g);
    free(scratch);
}

static int ready_order[DDP_MAX_LINEAR], n_ready;
static void record_ready(void *user, int layer)
{
    (void)user;
    ready_order[n_ready++] = layer;
}

static void test_buckets(void)
{
    ddp_layout m;
    char err[128];
    CHECKF(ddp_layout_init(&m, 16, 32, 4, 10, err, sizeof err) == 0, "%s", err);
    size_t caps[] = {1, 8 * 600, 8 * 2000, 1 << 30};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        ddp_bucket_plan plan;
        ddp_bucket_plan_build(&m, 8, caps[c], &plan);
        /* Buckets tile the gradient buffer from the end, whole layers, last layer (and the loss slots) first.
         */
        size_t end = m.n_grad;
        for (int k = 0; k < plan.n; k++) {
            const ddp_bucket *b = &plan.b[k];
            CHECKF(b->offset + b->count == end, "cap %zu bucket %d does not end where the previous began",
                   caps[c], k);
            CHECKF(b->offset == m.layer_off[b->first_layer], "bucket %d offset", k);
            size_t bytes = (b->count - (k == 0 ? DDP_N_STATS : 0)) * 8;
            CHECKF(bytes <= caps[c] || b->first_layer == b->last_layer, "cap %zu bucket %d holds %zu bytes",
                   caps[c], k, bytes);
            end = b->offset;
        }
        CHECKF(end == 0, "cap %zu: buckets do not reach offset 0", caps[c]);
        CHECKF(plan.b[0].last_layer == m.n_linear - 1, "bucket 0 must hold the last layer");
        int launched = 0;
        for (int i = m.n_linear - 1; i >= 0; i--)
            launched += ddp_bucket_completed_by(&plan, i) >= 0;
        CHECKF(launched == plan.n, "cap %zu: %d launches for %d buckets", caps[c], launched, plan.n);
    }
    ddp_bucket_plan one, each;
    ddp_bucket_plan_build(&m, 8, 1 << 30, &one);
    ddp_bucket_plan_build(&m, 8, 1, &each);
    CHECKF(one.n == 1 && each.n == m.n_linear, "plans of %d and %d buckets", one.n, each.n);

    /* The backward pass reports layers last first, each once. */
    ddp_host_net net;
    CHECKF(ddp_host_net_init(&net, &m, 2) == 0, "net");
    double *p = calloc(m.n_params, sizeof *p), *g = calloc(m.n_grad, sizeof *g);
    float x[2 * 16] = {0};
    int32_t y[2] = {1, 2};
    n_ready = 0;
    ddp_host_forward_backward(&net, p, x, y, 2, g, record_ready, NULL);
    CHECKF(n_ready == m.n_linear, "%d layers reported", n_ready);
    for (int i = 0; i < n_ready; i++)
        CHECKF(ready_order[i] == m.n_linear - 1 - i, "layer %d reported at %d", ready_order[i], i);
    ddp_host_net_free(&net);
    free(p);
    free(g);
}

/* N ranks with batch B read exactly the samples of one rank with batch N*B, across epoch boundaries. */
static void test_sampler(void)
{
    ddp_dataset ds;
    char err[256];
    CHECKF(ddp_dataset_synthetic(&ds, 10, 3, 4, 5, err, sizeof err) == 0, "%s", err);
    enum { R = 4, B = 3, STEPS = 7 };
    ddp_sampler whole, shard;
    ddp_sampler_init(&whole, &ds, 11);
    ddp_sampler_init(&shard, &ds, 11);
    float xw[R * B * 3], xs[B * 3];
    int32_t yw[R * B], ys[B];
    int seen[10] = {0};
    for (int g = 0; g < STEPS; g++) {
        ddp_sampler_fill(&whole, (int64_t)g * R * B, R * B, xw, yw);
        for (int r = 0; r < R; r++) {
            ddp_sampler_fill(&shard, (int64_t)g * R * B + r * B, B, xs, ys);
            CHECKF(memcmp(xs, xw + r * B * 3, sizeof xs) == 0 && memcmp(ys, yw + r * B, sizeof ys) == 0,
                   "step %d rank %d reads other samples than the single rank", g, r);
        }
    }
    /* An epoch visits every sample once. */
    float x1[3];
    int32_t y1;
    for (int p = 20; p < 30; p++) {
        ddp_sampler_fill(&whole, p, 1, x1, &y1);
        for (int i = 0; i < 10; i++)
            if (memcmp(x1, ds.xf + i * 3, sizeof x1) == 0)
                seen[i]++;
    }
    for (int i = 0; i < 10; i++)
        CHECKF(seen[i] == 1, "sample %d seen %d times in epoch 2", i, seen[i]);
    int classes_seen[4] = {0};
    ddp_dataset big;
    CHECKF(ddp_dataset_synthetic(&big, 2000, 16, 4, 5, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < 2000; i++)
        classes_seen[big.labels[i]]++;
    for (int c = 0; c < 4; c++)
        CHECKF(classes_seen[c] > 100, "class %d has only %d of 2000 synthetic samples", c, classes_seen[c]);
    ddp_dataset_free(&big);
    ddp_sampler_free(&whole);
    ddp_sampler_free(&shard);
    ddp_dataset_free(&ds);
}

static void test_digest(void)
{
    double a[4] = {1.0, -2.5, 3.25, 0.0}, b[4];
    memcpy(b, a, sizeof a);
    ddp_digest da, db;
    ddp_params_digest(a, 4, 8, &da);
    ddp_params_digest(b, 4, 8, &db);
    CHECKF(da.hash == db.hash && da.finite && fabs(da.sum - 1.75) < 1e-15, "identical arrays");
    b[2] = nextafter(b[2], INFINITY);
    ddp_params_digest(b, 4, 8, &db);
    CHECKF(da.hash != db.hash, "one ulp must change the hash");
    float f[2] = {1.0f, NAN};
    ddp_params_digest(f, 2, 4, &db);
    CHECKF(!db.finite, "NaN must be reported");
    CHECKF(ddp_loss_window(5) == 1 && ddp_loss_window(100) == 10 && ddp_loss_window(100000) == 20, "windows");
}

static void put32(FILE *f, unsigned v)
{
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    fwrite(b, 1, 4, f);
}

static void write_idx(const char *dir, unsigned img_magic, unsigned n, unsigned n_img_bytes,
                      unsigned n_labels)
{
    char path[512];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    FILE *f = fopen(path, "wb");
    put32(f, img_magic);
    put32(f, n);
    put32(f, 2);
    put32(f, 3);
    for (unsigned k = 0; k < n_img_bytes; k++)
        fputc((int)(k * 37 % 256), f);
    fclose(f);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    f = fopen(path, "wb");
    put32(f, 0x801);
    put32(f, n_labels);
    for (unsigned k = 0; k < n_labels; k++)
        fputc((int)(k % 3), f);
    fclose(f);
}

static void test_idx(void)
{
    char dir[] = "/tmp/ddp_idx_test.XXXXXX";
    CHECKF(mkdtemp(dir) != NULL, "mkdtemp");
    ddp_dataset ds;
    char err[1400] = "";
    write_idx(dir, 0x803, 5, 5 * 6, 5);
    CHECKF(ddp_dataset_load_idx(&ds, dir, err, sizeof err) == 0, "valid IDX: %s", err);
    CHECKF(ds.n == 5 && ds.dim == 6 && ds.classes == 3, "n %lld dim %d classes %d", (long long)ds.n, ds.dim,
           ds.classes);
    CHECKF(ds.xu8 && ds.xu8[7] == (7 * 37) % 256 && ds.labels[4] == 1, "IDX contents");
    ddp_sampler s;
    ddp_sampler_init(&s, &ds, 1);
    float x[6];
    int32_t y;
    ddp_sampler_fill(&s, 0, 1, x, &y);
    CHECKF(x[0] >= 0.0f && x[0] <= 1.0f, "pixels scale to [0, 1]");
    ddp_sampler_free(&s);
    ddp_dataset_free(&ds);

    struct {
        unsigned magic, n, bytes, labels;
        const char *want;
    } bad[] = {
        {0x802, 5, 30, 5, "not an IDX image file"},
        {0x803, 5, 29, 5, "its header says"},
        {0x803, 5, 30, 4, "labels"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_idx(dir, bad[i].magic, bad[i].n, bad[i].bytes, bad[i].labels);
        err[0] = '\0';
        CHECKF(ddp_dataset_load_idx(&ds, dir, err, sizeof err) != 0 && strstr(err, bad[i].want),
               "bad IDX case %zu: '%s' should mention '%s'", i, err, bad[i].want);
    }
    CHECKF(ddp_dataset_load_idx(&ds, "/nonexistent/ddp", err, sizeof err) != 0 && strstr(err, "cannot open"),
           "missing directory: '%s'", err);
    char path[512];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    unlink(path);
    rmdir(dir);
}

static void test_sgd(void)
{
    ddp_sgd opt = {0.1, 0.9};
    double p[1] = {1.0}, v[1] = {0.0}, g[1] = {2.0};
    ddp_sgd_step(&opt, p, v, g, 1);
    CHECKF(fabs(v[0] - 2.0) < 1e-15 && fabs(p[0] - 0.8) < 1e-15, "first step p %g v %g", p[0], v[0]);
    ddp_sgd_step(&opt, p, v, g, 1);
    CHECKF(fabs(v[0] - 3.8) < 1e-15 && fabs(p[0] - 0.42) < 1e-14, "second step p %g v %g", p[0], v[0]);
}

int main(void)
{
    test_gradients();
    test_buckets();
    test_sampler();
    test_digest();
    test_idx();
    test_sgd();
    return ga_test_finish();
}
