/* Small helpers of the suite front-end: a growable string buffer for the renderers, tolerant JSON getters (a
 * report from another version may lack a field: callers get a default, never a crash), and files written
 * atomically. Pure except the file functions. */
#ifndef SUITE_UTIL_H
#define SUITE_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the content is truncated */
} sbuf;

void sbuf_init(sbuf *b);
void sbuf_free(sbuf *b);
void sbuf_puts(sbuf *b, const char *s);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from a report reaches a page only through escape.h. */
const char *sbuf_str(const sbuf *b);
/* The text as a new string (free it), NULL when the buffer ran out of memory; b is freed either way. */
char *sbuf_finish(sbuf *b);
/* s in single quotes for a POSIX shell. */
void sbuf_shq(sbuf *b, const char *s);

/* Tolerant getters: the default when the key is absent or of another type (sj_int: also when a real
 * does not fit a long long). */
const char *sj_str(const json_t *obj, const char *key, const char *dflt);
long long sj_int(const json_t *obj, const char *key, long long dflt);
double sj_num(const json_t *obj, const char *key, double dflt); /* integer or real */
bool sj_bool(const json_t *obj, const char *key, bool dflt);
bool sj_is_num(const json_t *obj, const char *key);
/* obj[key] as an array, or NULL. */
json_t *sj_arr(const json_t *obj, const char *key);

/* "1.5 KiB", "256 MiB": byte counts as chart labels. */
void suite_format_bytes(double bytes, char *out, size_t len);

/* The largest file the front-end reads (a report of thousands of GPUs is a few MiB): a bigger one is
 * refused, not read into memory. */
#define SUITE_MAX_INPUT_BYTES (64 << 20)

/* Loads a JSON object from a regular file of at most SUITE_MAX_INPUT_BYTES (a FIFO, a device, an empty or
 * truncated file, a top-level array, duplicate keys are refused); NULL with a one-line message in err. */
json_t *suite_load_json(const char *path, char *err, size_t errlen);
/* The same for a file whose top level is an array (the Kubernetes patches). */
json_t *suite_load_json_array(const char *path, char *err, size_t errlen);
/* Writes text to path via a temporary file in the same directory and a rename. 0, or -1 with a message. */
int suite_write_text_atomic(const char *path, const char *text, char *err, size_t errlen);
/* The first half of that: text in a new temporary file beside path (its name in tmp), synced, not yet
 * renamed. For a set of files that should change together: write them all, then rename them all. */
int suite_write_text_temp(const char *path, const char *text, char *tmp, size_t tmplen, char *err,
                          size_t errlen);
/* JSON as the front-end writes it: indented, keys in insertion order, reals to 10 digits, a final newline.
 * New string (free it), NULL when out of memory. */
char *suite_json_text(const json_t *json);

/* Writes JSON (suite_json_text) atomically. */
int suite_write_json_atomic(const char *path, const json_t *json, char *err, size_t errlen);

/* Directory of the running executable (for the programs installed beside it). */
int suite_self_dir(char *buf, size_t len);

#endif
