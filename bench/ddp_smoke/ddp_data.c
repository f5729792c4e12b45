#include "ddp_data.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddp_rng.h"

int ddp_dataset_synthetic(ddp_dataset *ds, int64_t n, int dim, int classes, uint64_t seed, char *err,
                          size_t errlen)
{
    memset(ds, 0, sizeof *ds);
    enum { H = DDP_TEACHER_HIDDEN };
    ds->xf = malloc((size_t)n * (size_t)dim * sizeof *ds->xf);
    ds->labels = malloc((size_t)n);
    double *t1 = malloc((size_t)H * (size_t)dim * sizeof *t1);
    double *t2 = malloc((size_t)classes * H * sizeof *t2);
    if (!ds->xf || !ds->labels || !t1 || !t2) {
        free(t1);
        free(t2);
        ddp_dataset_free(ds);
        snprintf(err, errlen, "out of memory for %lld synthetic samples of %d features", (long long)n, dim);
        return DDP_DATA_OUT_OF_MEMORY;
    }
    ddp_rng tr = ddp_rng_for(seed, DDP_STREAM_TEACHER, 0);
    for (size_t k = 0; k < (size_t)H * (size_t)dim; k++)
        t1[k] = ddp_rng_normal(&tr) * 2.0 / sqrt((double)dim); /* pre-activations of order 2: nonlinear */
    for (size_t k = 0; k < (size_t)classes * H; k++)
        t2[k] = ddp_rng_normal(&tr);
    for (int64_t i = 0; i < n; i++) {
        float *x = ds->xf + (size_t)i * (size_t)dim;
        ddp_rng r = ddp_rng_for(seed, DDP_STREAM_SAMPLE, (uint64_t)i);
        for (int j = 0; j < dim; j++)
            x[j] = (float)ddp_rng_normal(&r);
        double h[H];
        for (int a = 0; a < H; a++) {
            double z = 0;
            for (int j = 0; j < dim; j++)
                z += t1[(size_t)a * (size_t)dim + (size_t)j] * x[j];
            h[a] = tanh(z);
        }
        int best = 0;
        double best_z = -INFINITY;
        for (int c = 0; c < classes; c++) {
            double z = 0;
            for (int a = 0; a < H; a++)
                z += t2[(size_t)c * H + (size_t)a] * h[a];
            if (z > best_z) {
                best_z = z;
                best = c;
            }
        }
        ds->labels[i] = (uint8_t)best;
    }
    free(t1);
    free(t2);
    ds->n = n;
    ds->dim = dim;
    ds->classes = classes;
    snprintf(ds->source, sizeof ds->source, "synthetic(%lld samples, %d features, %d classes, seed %llu)",
             (long long)n, dim, classes, (unsigned long long)seed);
    return 0;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* path opened for reading if it is a regular file (a FIFO would block until --timeout, a device never end);
 * NULL with errno set, EINVAL for another kind of file. */
static FILE *open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

/* Reads DIR/<base> or DIR/<dotted> whole; NULL with a message. */
static unsigned char *read_idx_file(const char *dir, const char *base, const char *dotted, size_t *len,
                                    char *path, size_t pathlen, char *err, size_t errlen)
{
    snprintf(path, pathlen, "%s/%s", dir, base);
    FILE *f = open_regular(path);
    if (!f && errno == ENOENT) {
        char alt[1100];
        snprintf(alt, sizeof alt, "%s/%s", dir, dotted);
        f = open_regular(alt);
        if (f || errno != ENOENT)
            snprintf(path, pathlen, "%s", alt);
    }
    if (!f) {
        snprintf(err, errlen, "--data idx:%s: cannot open %s: %s", dir, path,
                 errno == EINVAL ? "not a regular file" : strerror(errno));
        return NULL;
    }
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0)
        buf = malloc((size_t)st.st_size);
    if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        snprintf(err, errlen, "--data idx:%s: cannot read %s", dir, path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)st.st_size;
    return buf;
}

int ddp_dataset_load_idx(ddp_dataset *ds, const char *dir, char *err, size_t errlen)
{
    memset(ds, 0, sizeof *ds);
    char ipath[1100], lpath[1100];
    size_t ilen = 0, llen = 0;
    unsigned char *img = read_idx_file(dir, "train-images-idx3-ubyte", "train-images.idx3-ubyte", &ilen,
                                       ipath, sizeof ipath, err, errlen);
    if (!img)
        return -1;
    unsigned char *lab = read_idx_file(dir, "train-labels-idx1-ubyte", "train-labels.idx1-ubyte", &llen,
                                       lpath, sizeof lpath, err, errlen);
    if (!lab) {
        free(img);
        return -1;
    }
    int rc = -1;
    if (ilen < 16 && ilen >= 4 && be32(img) == 0x00000803u) {
        snprintf(err, errlen, "--data: %s is %zu bytes, shorter than an IDX image header (16)", ipath, ilen);
        goto out;
    }
    if (llen < 8 && llen >= 4 && be32(lab) == 0x00000801u) {
        snprintf(err, errlen, "--data: %s is %zu bytes, shorter than an IDX label header (8)", lpath, llen);
        goto out;
    }
    if (ilen < 16 || be32(img) != 0x00000803u) {
        snprintf(err, errlen, "--data: %s is not an IDX image file (magic 0x%08x, want 0x00000803)", ipath,
                 ilen >= 4 ? be32(img) : 0u);
        goto out;
    }
    if (llen < 8 || be32(lab) != 0x00000801u) {
        snprintf(err, errlen, "--data: %s is not an IDX label file (magic 0x%08x, want 0x00000801)", lpath,
                 llen >= 4 ? be32(lab) : 0u);
        goto out;
    }
    uint64_t n = be32(img + 4), rows = be32(img + 8), cols = be32(img + 12), nl = be32(lab + 4);
    if (n == 0 || rows == 0 || cols == 0 || rows * cols > (1u << 20)) {
        snprintf(err, errlen, "--data: %s: bad dimensions %llu x %llu x %llu", ipath, (unsigned long long)n,
                 (unsigned long long)rows, (unsigned long long)cols);
        goto out;
    }
    if (ilen != 16 + n * rows * cols) {
        snprintf(err, errlen,
                 "--data: %s: %zu bytes, but its header says %llu images of %llux%llu (%llu bytes)", ipath,
                 ilen, (unsigned long long)n, (unsigned long long)rows, (unsigned long long)cols,
                 (unsigned long long)(16 + n * rows * cols));
        goto out;
    }
    if (nl != n || llen != 8 + nl) {
        snprintf(err, errlen, "--data: %s holds %llu labels (%zu bytes) for %llu images", lpath,
                 (unsigned long long)nl, llen, (unsigned long long)n);
        goto out;
    }
    int classes = 0;
    for (uint64_t i = 0; i < n; i++)
        if (lab[8 + i] + 1 > classes)
            classes = lab[8 + i] + 1;
    if (classes < 2) {
        snprintf(err, errlen, "--data: %s: every label is 0; need at least two classes", lpath);
        goto out;
    }
    ds->xu8 = malloc(n * rows * cols);
    ds->labels = malloc(n);
    if (!ds->xu8 || !ds->labels) {
        snprintf(err, errlen, "--data: out of memory for %llu images", (unsigned long long)n);
        ddp_dataset_free(ds);
        rc = DDP_DATA_OUT_OF_MEMORY;
        goto out;
    }
    memcpy(ds->xu8, img + 16, n * rows * cols);
    memcpy(ds->labels, lab + 8, n);
    ds->n = (int64_t)n;
    ds->dim = (int)(rows * cols);
    ds->classes = classes;
    snprintf(ds->source, sizeof ds->source, "idx:%s (%llu images %llux%llu, %d classes)", dir,
             (unsigned long long)n, (unsigned long long)rows, (unsigned long long)cols, classes);
    rc = 0;
out:
    free(img);
    free(lab);
    return rc;
}

void ddp_dataset_free(ddp_dataset *ds)
{
    free(ds->xf);
    free(ds->xu8);
    free(ds->labels);
    ds->xf = NULL;
    ds->xu8 = NULL;
    ds->labels = NULL;
}

int ddp_sampler_init(ddp_sampler *s, const ddp_dataset *ds, uint64_t seed)
{
    s->ds = ds;
    s->seed = seed;
    s->epoch = -1;
    s->perm = malloc((size_t)ds->n * sizeof *s->perm);
    return s->perm ? 0 : -1;
}

void ddp_sampler_free(ddp_sampler *s)
{
    free(s->perm);
    s->perm = NULL;
}

/* Fisher-Yates from the seed and the epoch: the same order on every rank. */
static void shuffle(ddp_sampler *s, int64_t epoch)
{
    int64_t n = s->ds->n;
    for (int64_t i = 0; i < n; i++)
        s->perm[i] = i;
    ddp_rng r = ddp_rng_for(s->seed, DDP_STREAM_SHUFFLE, (uint64_t)epoch);
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(ddp_rng_next(&r) % (uint64_t)(i + 1));
        int64_t t = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = t;
    }
    s->epoch = epoch;
}

void ddp_sampler_fill(ddp_sampler *s, int64_t first, int count, float *x, int32_t *labels)
{
    const ddp_dataset *ds = s->ds;
    size_t dim = (size_t)ds->dim;
    for (int k = 0; k < count; k++) {
        int64_t p = first + k, epoch = p / ds->n;
        if (epoch != s->epoch)
            shuffle(s, epoch);
        int64_t i = s->perm[p % ds->n];
        float *row = x + (size_t)k * dim;
        if (ds->xf) {
            memcpy(row, ds->xf + (size_t)i * dim, dim * sizeof *row);
        } else {
            const uint8_t *px = ds->xu8 + (size_t)i * dim;
            for (size_t j = 0; j < dim; j++)
                row[j] = (float)px[j] * (1.0f / 255.0f);
        }
        labels[k] = ds->labels[i];
    }
}
