#include "suite_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sbuf_init(sbuf *b)
{
    memset(b, 0, sizeof *b);
}

void sbuf_free(sbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static bool sbuf_reserve(sbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

static void sbuf_append(sbuf *b, const char *s, size_t n)
{
    if (!sbuf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sbuf_puts(sbuf *b, const char *s)
{
    sbuf_append(b, s, strlen(s));
}

void sbuf_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *sbuf_str(const sbuf *b)
{
    return b->data ? b->data : "";
}

char *sbuf_finish(sbuf *b)
{
    char *s = b->failed ? NULL : strdup(sbuf_str(b));
    sbuf_free(b);
    return s;
}

const char *sj_str(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

long long sj_int(const json_t *obj, const char *key, long long dflt)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v)) {
        /* Only a value a long long can hold converts (anything else is undefined behaviour); a real that
         * does not fit, or is not finite, is as absent. */
        double d = json_real_value(v);
        if (isfinite(d) && d > -9.2e18 && d < 9.2e18)
            return (long long)d;
    }
    return dflt;
}

double sj_num(const json_t *obj, const char *key, double dflt)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

bool sj_bool(const json_t *obj, const char *key, bool dflt)
{
    json_t *v = json_object_get(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

bool sj_is_num(const json_t *obj, const char *key)
{
    return json_is_number(json_object_get(obj, key));
}

json_t *sj_arr(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_array(v) ? v : NULL;
}

void suite_format_bytes(double bytes, char *out, size_t len)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    /* a size from an untrusted report may be negative, huge or not finite: cast only what fits */
    if (!isfinite(bytes) || fabs(bytes) >= 1e15)
        snprintf(out, len, "%.3g %s", bytes, units[u]);
    else if (bytes == (double)(long long)bytes)
        snprintf(out, len, "%lld %s", (long long)bytes, units[u]);
    else
        snprintf(out, len, "%.1f %s", bytes, units[u]);
}

/* A file's JSON value of any type, with every check of suite_load_json but the object one. */
static json_t *load_json_value(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO must not hang the front-end; it is refused below as not a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st.st_size > SUITE_MAX_INPUT_BYTES) {
        snprintf(err, errlen, "%s: %lld bytes, more than the %d MiB a gpuaccept file may have", path,
                 (long long)st.st_size, SUITE_MAX_INPUT_BYTES >> 20);
        close(fd);
        return NULL;
    }
    size_t cap = (size_t)st.st_size, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return NULL;
    }
    /* The size may change under us: read at most cap bytes, and a file that grew is refused. */
    for (;;) {
        ssize_t r = read(fd, buf + len, cap + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len > cap) {
            snprintf(err, errlen, "%s: changed while being read", path);
            free(buf);
            close(fd);
            return NULL;
        }
    }
    close(fd);
    json_error_t je;
    json_t *j = len ? json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je) : NULL;
    free(buf);
    if (!j && len)
        snprintf(err, errlen, "%s: not valid JSON: %s (line %d)", path, je.text, je.line);
    else if (!j)
        snprintf(err, errlen, "%s: empty file", path);
    return j;
}

static json_t *load_json_of(const char *path, bool object, char *err, size_t errlen)
{
    json_t *j = load_json_value(path, err, errlen);
    if (j && (object ? !json_is_object(j) : !json_is_array(j))) {
        snprintf(err, errlen, "%s: not a JSON %s", path, object ? "object" : "array");
        json_decref(j);
        j = NULL;
    }
    return j;
}

json_t *suite_load_json(const char *path, char *err, size_t errlen)
{
    return load_json_of(path, true, err, errlen);
}

json_t *suite_load_json_array(const char *path, char *err, size_t errlen)
{
    return load_json_of(path, false, err, errlen);
}

int suite_write_text_atomic(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[4096];
    if (suite_write_text_temp(path, text, tmp, sizeof tmp, err, errlen) != 0)
        return -1;
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int suite_write_text_temp(const char *path, const char *text, char *tmp, size_t tmplen, char *err,
                          size_t errlen)
{
    snprintf(tmp, tmplen, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file beside %s: %s", path, strerror(errno));
        return -1;
    }
    size_t len = strlen(text);
    const char *p = text;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    /* mkstemp creates 0600; the summary is for people to read. */
    if (fchmod(fd, 0644) != 0 || fsync(fd) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

char *suite_json_text(const json_t *json)
{
    char *text = json_dumps(json, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    size_t n = text ? strlen(text) : 0;
    char *with_nl = text ? malloc(n + 2) : NULL;
    if (with_nl) {
        memcpy(with_nl, text, n);
        memcpy(with_nl + n, "\n", 2);
    }
    free(text);
    return with_nl;
}

int suite_write_json_atomic(const char *path, const json_t *json, char *err, size_t errlen)
{
    char *text = suite_json_text(json);
    if (!text) {
        snprintf(err, errlen, "cannot serialise JSON for %s", path);
        return -1;
    }
    int rc = suite_write_text_atomic(path, text, err, errlen);
    free(text);
    return rc;
}

int suite_self_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

void sbuf_shq(sbuf *b, const char *s)
{
    sbuf_puts(b, "'");
    while (*s) {
        size_t run = strcspn(s, "'");
        if (run)
            sbuf_printf(b, "%.*s", (int)run, s);
        s += run;
        if (*s) {
            sbuf_puts(b, "'\\''");
            s++;
        }
    }
    sbuf_puts(b, "'");
}
