#include "finding_text.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "suite_util.h"

void suite_finding_where(const json_t *e, char *buf, size_t len)
{
    const char *host = sj_str(e, "host", NULL);
    if (!host)
        snprintf(buf, len, "cluster");
    else if (sj_int(e, "gpu", -1) >= 0)
        snprintf(buf, len, "%s GPU %lld", host, sj_int(e, "gpu", -1));
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
    if (host && names_host(msg, host)) {
        snprintf(buf, len, "%s", msg);
        return;
    }
    char where[160];
    suite_finding_where(f, where, sizeof where);
    snprintf(buf, len, "%s: %s", where, msg);
}
