#include "ddp_data.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* The two IDX files as read: their bytes, sizes and paths (for the messages). */
typedef struct {
    const unsigned char *img, *lab;
    size_t ilen, llen;
    const char *ipath, *lpath;
} idx_files;

/* A one-line message into err; -1. */
static int idx_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The headers' magic numbers and sizes: 0 with the image count and size, or -1 with a one-line message. */
static int idx_check_headers(const idx_files *f, uint64_t *n, uint64_t *rows, uint64_t *cols, char *err,
                             size_t errlen)
{
    typedef unsigned long long ull;
    bool img_magic = f->ilen >= 4 && be32(f->img) == 0x00000803u;
    bool lab_magic = f->llen >= 4 && be32(f->lab) == 0x00000801u;
    if (f->ilen < 16 && img_magic)
        return idx_error(err, errlen, "--data: %s is %zu bytes, shorter than an IDX image header (16)",
                         f->ipath, f->ilen);
    if (f->llen < 8 && lab_magic)
        return idx_error(err, errlen, "--data: %s is %zu bytes, shorter than an IDX label header (8)",
                         f->lpath, f->llen);
    if (f->ilen < 16 || !img_magic)
        return idx_error(err, errlen, "--data: %s is not an IDX image file (magic 0x%08x, want 0x00000803)",
                         f->ipath, f->ilen >= 4 ? be32(f->img) : 0u);
    if (f->llen < 8 || !lab_magic)
        return idx_error(err, errlen, "--data: %s is not an IDX label file (magic 0x%08x, want 0x00000801)",
                         f->lpath, f->llen >= 4 ? be32(f->lab) : 0u);
    *n = be32(f->img + 4), *rows = be32(f->img + 8), *cols = be32(f->img + 12);
    uint64_t nl = be32(f->lab + 4);
    if (*n == 0 || *rows == 0 || *cols == 0 || *rows * *cols > (1u << 20))
        return idx_error(err, errlen, "--data: %s: bad dimensions %llu x %llu x %llu", f->ipath, (ull)*n,
                         (ull)*rows, (ull)*cols);
    if (f->ilen != 16 + *n * *rows * *cols)
        return idx_error(err, errlen,
                         "--data: %s: %zu bytes, but its header says %llu images of %llux%llu (%llu bytes)",
                         f->ipath, f->ilen, (ull)*n, (ull)*rows, (ull)*cols, (ull)(16 + *n * *rows * *cols));
    if (nl != *n || f->llen != 8 + nl)
        return idx_error(err, errlen, "--data: %s holds %llu labels (%zu bytes) for %llu images", f->lpath,
                         (ull)nl, f->llen, (ull)*n);
    return 0;
}

/* Checked files into the dataset: 0, -1 (fewer than two classes) or DDP_DATA_OUT_OF_MEMORY, with err. */
static int idx_fill(ddp_dataset *ds, const idx_files *f, const char *dir, uint64_t n, uint64_t rows,
                    uint64_t cols, char *err, size_t errlen)
{
    int classes = 0;
    for (uint64_t i = 0; i < n; i++)
        if (f->lab[8 + i] + 1 > classes)
            classes = f->lab[8 + i] + 1;
    if (classes < 2) {
        snprintf(err, errlen, "--data: %s: every label is 0; need at least two classes", f->lpath);
        return -1;
    }
    ds->xu8 = malloc(n * rows * cols);
    ds->labels = malloc(n);
    if (!ds->xu8 || !ds->labels) {
        snprintf(err, errlen, "--data: out of memory for %llu images", (unsigned long long)n);
        ddp_dataset_free(ds);
        return DDP_DATA_OUT_OF_MEMORY;
    }
    memcpy(ds->xu8, f->img + 16, n * rows * cols);
    memcpy(ds->labels, f->lab + 8, n);
    ds->n = (int64_t)n;
    ds->dim = (int)(rows * cols);
    ds->classes = classes;
    snprintf(ds->source, sizeof ds->source, "idx:%s (%llu images %llux%llu, %d classes)", dir,
             (unsigned long long)n, (unsigned long long)rows, (unsigned long long)cols, classes);
    return 0;
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
    const idx_files f = {img, lab, ilen, llen, ipath, lpath};
    uint64_t n = 0, rows = 0, cols = 0;
    int rc = idx_check_headers(&f, &n, &rows, &cols, err, errlen);
    if (rc == 0)
        rc = idx_fill(ds, &f, dir, n, rows, cols, err, errlen);
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
