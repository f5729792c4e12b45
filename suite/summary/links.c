/* Link findings as their own abnormal entity (links.h). */
#include "links.h"

#include <stdio.h>
#include <string.h>

#include "ga_str.h"
#include "suite_util.h"

/* The two hosts a COMM_SLOW_LINK message names: "pair A node 0 <-> B node 3 ..." (or "rank"), as
 * allreduce_bw's ar_pairs_findings writes it. Host names hold no blanks (RFC 1123). */
static bool parse_ends(const char *msg, char *a, char *b, size_t len)
{
    char fmt[96], ua[8], ub[8];
    int ma, mb;
    if (len < 2 || !msg)
        return false;
    snprintf(fmt, sizeof fmt, "pair %%%zus %%7s %%d <-> %%%zus %%7s %%d", len - 1, len - 1);
    if (sscanf(msg, fmt, a, ua, &ma, b, ub, &mb) != 6)
        return false;
    return (ga_streq(ua, "node") || ga_streq(ua, "rank")) && ga_streq(ua, ub);
}

static const char *one_name(const json_t *aliases, const char *host)
{
    const char *to = json_string_value(json_object_get(aliases, host));
    return to ? to : host;
}

/* Whether host was in a pair with someone other than peer that the program did not flag: pairs is the
 * report's own list ([{hosts: [x, y], flagged}], raw names), compared by each machine's one name. */
static bool fine_with_others(const json_t *pairs, const json_t *aliases, const char *host, const char *peer)
{
    size_t i;
    json_t *p;
    json_array_foreach(pairs, i, p) {
        const char *x = json_string_value(json_array_get(json_object_get(p, "hosts"), 0));
        const char *y = json_string_value(json_array_get(json_object_get(p, "hosts"), 1));
        x = x ? one_name(aliases, x) : NULL;
        y = y ? one_name(aliases, y) : NULL;
        const char *other = ga_streq(x, host) ? y : ga_streq(y, host) ? x : NULL;
        if (other && !ga_streq(other, peer) && !ga_streq(other, host) &&
            !json_is_true(json_object_get(p, "flagged")))
            return true;
    }
    return false;
}

/* The other end of link finding f (whose "host" is one end), by its one name: its "peer_host" where the
 * program wrote one (issue 46, item 4), else read from the message of a report without it. */
static bool other_end(const json_t *f, const json_t *aliases, char *peer, size_t len)
{
    const char *host = sj_str(f, "host", NULL), *given = sj_str(f, "peer_host", NULL);
    char a[256], b[256];
    if (given && *given) {
        snprintf(peer, len, "%s", one_name(aliases, given));
        return true;
    }
    if (!parse_ends(sj_str(f, "message", NULL), a, b, sizeof a))
        return false;
    snprintf(peer, len, "%s", one_name(aliases, ga_streq(one_name(aliases, a), host) ? b : a));
    return true;
}

void suite_links_mark(json_t *s, const json_t *aliases)
{
    size_t i;
    json_t *f;
    json_array_foreach(sj_arr(s, "findings"), i, f) {
        char peer[256];
        const char *host = sj_str(f, "host", NULL), *program = sj_str(f, "program", "");
        if (!host || !ga_streq(sj_str(f, "code", ""), SUITE_LINK_CODE) ||
            !other_end(f, aliases, peer, sizeof peer) || ga_streq(peer, host))
            continue;
        /* The report's pairs, where it has them. Without them the finding's own evidence stands. */
        const json_t *pairs = sj_arr(
            json_object_get(json_object_get(json_object_get(s, "figures"), program), "pairs"), "pairs");
        if (json_array_size(pairs) &&
            !(fine_with_others(pairs, aliases, host, peer) && fine_with_others(pairs, aliases, peer, host)))
            continue;
        json_object_set_new(f, "link", json_pack("[s,s]", host, peer));
    }
}

bool suite_link_ends(const json_t *finding, const char **a, const char **b)
{
    const json_t *link = json_object_get(finding, "link");
    *a = json_string_value(json_array_get(link, 0));
    *b = json_string_value(json_array_get(link, 1));
    return *a && *b;
}

json_t *suite_abnormal_links(const json_t *findings)
{
    json_t *links = json_array(), *index = json_object(), *f;
    size_t i;
    json_array_foreach(findings, i, f) {
        const char *a, *b;
        if (!suite_link_ends(f, &a, &b) || !ga_streq(sj_str(f, "severity", ""), "fail"))
            continue;
        char key[520]; /* either order is one link */
        snprintf(key, sizeof key, "%s\n%s", strcmp(a, b) < 0 ? a : b, strcmp(a, b) < 0 ? b : a);
        json_t *link = json_object_get(index, key);
        if (!link) {
            link = json_pack("{s:[s,s], s:s, s:[], s:s}", "hosts", a, b, "program", sj_str(f, "program", "?"),
                             "fault_codes", "message", sj_str(f, "message", ""));
            if (!link)
                continue;
            json_array_append_new(links, link);
            json_object_set(index, key, link);
        }
        const char *code = sj_str(f, "code", "?");
        json_t *codes = json_object_get(link, "fault_codes"), *c;
        size_t k;
        bool seen = false;
        json_array_foreach(codes, k, c)
            seen |= ga_streq(json_string_value(c), code);
        if (!seen)
            json_array_append_new(codes, json_string(code));
    }
    json_decref(index);
    return links;
}

json_t *suite_link_ends_set(const json_t *summary)
{
    json_t *set = json_object(), *l;
    size_t i;
    json_array_foreach(sj_arr(summary, "abnormal_links"), i, l)
        for (size_t k = 0; k < 2; k++) {
            const char *h = json_string_value(json_array_get(json_object_get(l, "hosts"), k));
            if (h)
                json_object_set_new(set, h, json_true());
        }
    return set;
}
