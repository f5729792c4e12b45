#include "hostfile.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ga_exit.h"

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

int suite_hostfile_read(const char *path, suite_hostlist *out, char *err, size_t errlen)
{
    out->n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read hostfile %s", path);
        return -1;
    }
    char buf[1024];
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
        const char *sl = strstr(s + name_len, "slots=");
        if (sl && (sl == s + name_len || sl[-1] == ' ' || sl[-1] == '\t')) {
            char *end;
            long v = strtol(sl + 6, &end, 10);
            if (end == sl + 6 || v < 1 || v > 100000 || (*end && *end != ' ' && *end != '\t')) {
                snprintf(err, errlen, "hostfile %s line %d: bad slots= in '%s'", path, lineno, s);
                rc = -1;
                break;
            }
            h->slots = (int)v;
        }
        out->n++;
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
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    for (size_t i = 0; i < hosts->n; i++)
        if (keep[i])
            fprintf(f, "%s\n", hosts->host[i].line);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    return 0;
}
