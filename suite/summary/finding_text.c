#include "finding_text.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ga_pci.h"
#include "suite_util.h"

bool suite_is_gpu(const json_t *e)
{
    return sj_int(e, "gpu", -1) >= 0 || sj_str(e, "pci_bus_id", NULL);
}

bool suite_same_gpu(const json_t *row, const json_t *e)
{
    const char *a = sj_str(row, "pci_bus_id", NULL), *b = sj_str(e, "pci_bus_id", NULL);
    if (a && b)
        return ga_pci_same(a, b);
    return sj_int(e, "gpu", -1) >= 0 && sj_int(row, "gpu", -1) == sj_int(e, "gpu", -1);
}

void suite_gpu_name(const json_t *e, char *buf, size_t len)
{
    const char *pci = sj_str(e, "pci_bus_id", NULL);
    long long index = sj_int(e, "gpu", -1);
    if (pci && index >= 0)
        snprintf(buf, len, "GPU %lld (%s)", index, pci);
    else if (pci)
        snprintf(buf, len, "GPU %s", pci);
    else if (index >= 0)
        snprintf(buf, len, "GPU %lld", index);
    else if (len)
        buf[0] = '\0';
}

void suite_finding_where(const json_t *e, char *buf, size_t len)
{
    const char *host = sj_str(e, "host", NULL);
    char gpu[96];
    suite_gpu_name(e, gpu, sizeof gpu);
    if (!host)
        snprintf(buf, len, "cluster");
    else if (gpu[0])
        snprintf(buf, len, "%s %s", host, gpu);
    else if (sj_int(e, "rank", -1) >= 0)
        snprintf(buf, len, "%s rank %lld", host, sj_int(e, "rank", -1));
    else
        snprintf(buf, len, "%s", host);
}

/* Whether host appears in text as a whole name: "gpu-node-1" is not named by "gpu-node-10". */
static bool names_host(const char *text, const char *host)
{
    size_t hl = strlen(host);
    if (hl == 0)
        return false;
    for (const char *p = strstr(text, host); p; p = strstr(p + 1, host)) {
        char before = p == text ? ' ' : p[-1], after = p[hl];
        bool word_before = isalnum((unsigned char)before) || before == '-' || before == '_';
        bool word_after = isalnum((unsigned char)after) || after == '-' || after == '_';
        if (!word_before && !word_after)
            return true;
    }
    return false;
}

void suite_finding_text(const json_t *f, char *buf, size_t len)
{
    const char *host = sj_str(f, "host", NULL), *msg = sj_str(f, "message", "");
    const char *pci = sj_str(f, "pci_bus_id", NULL);
    if (host && names_host(msg, host)) {
        /* The programs' messages name a GPU by its CUDA ordinal: the bus id beside it says which one. */
        char gpu[96];
        suite_gpu_name(f, gpu, sizeof gpu);
        if (pci && !strstr(msg, pci))
            snprintf(buf, len, "%s [%s]", msg, gpu);
        else
            snprintf(buf, len, "%s", msg);
        return;
    }
    char where[160], rank[40];
    suite_finding_where(f, where, sizeof where);
    /* "gpu-node-03 rank 5: rank 5: ..." names the rank twice when the message starts with it */
    snprintf(rank, sizeof rank, "rank %lld:", sj_int(f, "rank", -1));
    if (host && !suite_is_gpu(f) && sj_int(f, "rank", -1) >= 0 && strncmp(msg, rank, strlen(rank)) == 0)
        snprintf(buf, len, "%s %s", host, msg);
    else
        snprintf(buf, len, "%s: %s", where, msg);
}
