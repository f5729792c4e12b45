#include "hostfile.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ga_exit.h"
#include "node_name.h"
#include "suite_util.h"

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Open MPI's words for a node's slots and for its most slots (orte/util/hostfile/hostfile_lex.l). */
static const char *const slot_words[] = {"slots", "count", "cpu"};
static const char *const max_words[] = {"max_slots", "max-slots", "slots_max", "slots-max",
                                        "max_cpu",   "max-cpu",   "cpu_max",   "cpu-max",
                                        "max_count", "max-count", "count_max", "count-max"};
static const char *const user_words[] = {"username", "user-name", "user_name"};

static bool word_in(const char *w, size_t len, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && strncmp(w, list[i], len) == 0)
            return true;
    return false;
}

/* The words after a host's name: slots=N and max_slots=N (and Open MPI's other spellings of them), each at
 * most once, N a whole number from 1 to 100000 and max_slots not below slots, and username=NAME. Anything
 * else (a value mpirun cannot read, a word gpuaccept does not know) is refused here rather than by every
 * step's mpirun. 0, or -1 with why. */
static int parse_attrs(char *s, suite_host *h, char *why, size_t whylen)
{
    int max = 0;
    for (char *w = strtok(s, " \t"); w; w = strtok(NULL, " \t")) {
        char *eq = strchr(w, '='), *end = NULL;
        size_t klen = eq ? (size_t)(eq - w) : strlen(w);
        bool is_slots = eq && word_in(w, klen, slot_words, sizeof slot_words / sizeof *slot_words);
        bool is_max = eq && word_in(w, klen, max_words, sizeof max_words / sizeof *max_words);
        if (eq && word_in(w, klen, user_words, sizeof user_words / sizeof *user_words) &&
            suite_node_name_ok(eq + 1))
            continue; /* a login name: the same characters as a node name */
        long v = eq ? strtol(eq + 1, &end, 10) : 0;
        if (!is_slots && !is_max) {
            snprintf(why, whylen, "'%s' is not slots=N, max_slots=N or username=NAME", w);
            return -1;
        }
        if (end == eq + 1 || *end || v < 1 || v > 100000 || (is_slots ? h->slots : max) != 0) {
            snprintf(why, whylen, "bad or repeated %.*s= in '%s'", (int)klen, w, w);
            return -1;
        }
        *(is_slots ? &h->slots : &max) = (int)v;
    }
    if (max && h->slots > max) {
        snprintf(why, whylen, "slots=%d is more than max_slots=%d", h->slots, max);
        return -1;
    }
    return 0;
}

int suite_hostfile_read(const char *path, suite_hostlist *out, char *err, size_t errlen)
{
    out->n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read hostfile %s", path);
        return -1;
    }
    char buf[1024], why[300];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        lineno++;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(buf);
        if (!*s)
            continue;
        size_t name_len = strcspn(s, " \t");
        suite_host *h = &out->host[out->n];
        if (out->n == SUITE_HOSTS_MAX || name_len >= sizeof h->name || strlen(s) >= sizeof h->line) {
            snprintf(err, errlen, "hostfile %s line %d: too many hosts or a line too long", path, lineno);
            rc = -1;
            break;
        }
        memcpy(h->name, s, name_len);
        h->name[name_len] = '\0';
        snprintf(h->line, sizeof h->line, "%s", s);
        h->slots = 0;
        if (!suite_node_name_ok(h->name)) {
            snprintf(err, errlen,
                     "hostfile %s line %d: '%s' is not a node name (letters, digits, '.', '-', '_')", path,
                     lineno, h->name);
            rc = -1;
        } else if (parse_attrs(s + name_len, h, why, sizeof why) != 0) {
            snprintf(err, errlen, "hostfile %s line %d: %s", path, lineno, why);
            rc = -1;
        } else {
            out->n++;
        }
    }
    fclose(f);
    return rc;
}

long suite_hostlist_slots(const suite_hostlist *hosts)
{
    long total = 0;
    for (size_t i = 0; i < hosts->n; i++) {
        if (hosts->host[i].slots <= 0)
            return -1;
        total += hosts->host[i].slots;
    }
    return total;
}

int suite_hostfile_validate(const char *path, long np, suite_hostlist *out, char *err, size_t errlen)
{
    if (suite_hostfile_read(path, out, err, errlen) != 0)
        return GA_EXIT_USAGE;
    if (out->n == 0) {
        snprintf(err, errlen, "hostfile %s names no host", path);
        return GA_EXIT_USAGE;
    }
    long slots = suite_hostlist_slots(out);
    if (np > 0 && slots > 0 && np > slots) {
        snprintf(err, errlen, "--np %ld is more than the %ld slots of hostfile %s", np, slots, path);
        return GA_EXIT_USAGE;
    }
    for (size_t i = 0; i < out->n; i++) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        int r = getaddrinfo(out->host[i].name, NULL, &hints, &res);
        if (res)
            freeaddrinfo(res);
        if (r != 0) {
            snprintf(err, errlen, "hostfile %s: host '%s' does not resolve (%s)", path, out->host[i].name,
                     gai_strerror(r));
            return GA_EXIT_ENV;
        }
    }
    return 0;
}

int suite_hostfile_write(const char *path, const suite_hostlist *hosts, const bool *keep, char *err,
                         size_t errlen)
{
    sbuf text;
    sbuf_init(&text);
    for (size_t i = 0; i < hosts->n; i++)
        if (keep[i])
            sbuf_printf(&text, "%s\n", hosts->host[i].line);
    int rc = text.failed ? -1 : suite_write_text_atomic(path, sbuf_str(&text), err, errlen);
    if (text.failed)
        snprintf(err, errlen, "out of memory writing %s", path);
    sbuf_free(&text);
    return rc;
}
