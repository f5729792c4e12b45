#include "ga_ib_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ga_ib_list_parse(const char *s, ga_ib_list *l)
{
    memset(l, 0, sizeof *l);
    if (!s)
        return;
    /* net_ib.cc, ncclIbInitDevices: '^' first, then '=' */
    l->exclude = s[0] == '^';
    s += l->exclude;
    l->exact = s[0] == '=';
    s += l->exact;
    /* utils.cc, parseStringList: characters up to ',' or ':' make a name; ":N" gives its port (atoi) and the
     * rest up to the next ',' is skipped; an empty name makes no entry. */
    size_t len = 0;
    for (const char *p = s;; p++) {
        char c = *p;
        if (c == ':') {
            if (len > 0 && l->n < GA_IB_LIST_MAX) {
                l->entries[l->n].prefix[len] = '\0';
                l->entries[l->n++].port = atoi(p + 1);
            }
            len = 0;
            while (*p && *p != ',')
                p++;
            c = *p;
        } else if (c == ',' || c == '\0') {
            if (len > 0 && l->n < GA_IB_LIST_MAX) {
                l->entries[l->n].prefix[len] = '\0';
                l->entries[l->n++].port = -1;
            }
            len = 0;
        } else if (len < sizeof l->entries[0].prefix - 1 && l->n < GA_IB_LIST_MAX)
            l->entries[l->n].prefix[len++] = c;
        if (c == '\0')
            break;
    }
}

int ga_ib_list_check(const char *s, char *why, size_t whylen)
{
    const char *p = s + (s[0] == '^');
    p += p[0] == '=';
    int entries = 0;
    while (*p) {
        size_t name = strcspn(p, ",:"), all = strcspn(p, ",");
        if (name == 0 || name > 63) {
            snprintf(why, whylen, "'%.*s': %s", (int)all, p,
                     name ? "a name longer than 63 bytes" : "no name");
            return -1;
        }
        if (all > name) {
            char *end = NULL;
            long port = strtol(p + name + 1, &end, 10);
            if (end != p + all || port < 1 || port > 255) {
                snprintf(why, whylen, "'%.*s': the port after ':' is a number from 1", (int)all, p);
                return -1;
            }
        }
        entries++;
        p += all + (p[all] == ',');
    }
    if (entries == 0 || entries > GA_IB_LIST_MAX) {
        snprintf(why, whylen, "%s", entries ? "more than 32 entries" : "no device named");
        return -1;
    }
    return 0;
}

bool ga_ib_list_match(const ga_ib_list *l, const char *name, int port)
{
    bool hit = l->n == 0; /* matchIfList: "Make an exception for the case where no user list is defined" */
    for (int i = 0; i < l->n && !hit; i++) {
        const char *ref = l->entries[i].prefix;
        bool named = l->exact ? strcmp(name, ref) == 0 : strncmp(name, ref, strlen(ref)) == 0;
        hit = named && (l->entries[i].port == -1 || port == -1 || l->entries[i].port == port);
    }
    return hit != l->exclude;
}

bool ga_ib_list_keeps_device(const ga_ib_list *l, const char *device)
{
    /* "a+b" (merged ports): every part; "name:port" splits at the last ':' */
    for (const char *s = device;;) {
        size_t n = strcspn(s, "+");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), s);
        int port = -1;
        char *colon = strrchr(name, ':');
        if (colon && colon[1]) {
            char *end = NULL;
            long v = strtol(colon + 1, &end, 10);
            if (*end == '\0' && v > 0) {
                *colon = '\0';
                port = (int)v;
            }
        }
        /* a Data Direct device is listed as "<name>_dma" (net_ib.cc:785), and NCCL matched NCCL_IB_HCA
         * against <name> (net_ib.cc:740): so does this */
        size_t len = strlen(name);
        if (len > 4 && strcmp(name + len - 4, "_dma") == 0)
            name[len - 4] = '\0';
        if (!name[0] || !ga_ib_list_match(l, name, port))
            return false;
        if (s[n] == '\0')
            return true;
        s += n + 1;
    }
}
