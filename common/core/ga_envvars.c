#include "ga_envvars.h"
#include "ga_text.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* What shapes NCCL, MPI, UCX and CUDA behaviour, and what identifies the job. Extend with care: every name
 * here lands in reports people share. */
static const char *const allowed_prefixes[] = {"NCCL_", "UCX_",    "OMPI_MCA_", "PMIX_MCA_",
                                               "CUDA_", "NVIDIA_", "HWLOC_"};
static const char *const allowed_names[] = {"OMP_NUM_THREADS",
                                            "OPENBLAS_NUM_THREADS",
                                            "LD_LIBRARY_PATH",
                                            "SLURM_JOB_ID",
                                            "SLURM_JOB_NODELIST",
                                            "SLURM_NTASKS",
                                            "SLURM_STEP_NUM_TASKS",
                                            "SLURM_MPI_TYPE",
                                            "SLURM_CPU_BIND",
                                            "SLURM_GPUS_ON_NODE",
                                            "SLURM_STEP_GPUS",
                                            "OMPI_COMM_WORLD_SIZE",
                                            "OMPI_COMM_WORLD_LOCAL_RANK"};

/* What mpirun and PMIx set for their own wiring of each launch (session directories, daemon URIs, transport
 * keys): per-rank noise, and not the user's configuration. */
static const char *const launch_internal_prefixes[] = {
    "OMPI_MCA_orte_ess_",    "OMPI_MCA_orte_hnp",          "OMPI_MCA_orte_local",  "OMPI_MCA_orte_launch",
    "OMPI_MCA_orte_num",     "OMPI_MCA_orte_app",          "OMPI_MCA_orte_jobfam", "OMPI_MCA_orte_top",
    "OMPI_MCA_orte_tmpdir",  "OMPI_MCA_orte_precondition", "OMPI_MCA_ess",         "OMPI_MCA_pmix",
    "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME",     "PMIX_MCA_mca_base",    "PMIX_MCA_psec"};

/* Words that mark a name as holding a credential wherever they appear in one of its '_'-separated parts
 * (NCCL_AUTHTOKEN, NVIDIA_SECRETKEY, UCX_PASSWORD2, OMPI_MCA_btl_tcp_passphrase). */
static const char *const secret_stems[] = {"TOKEN",  "SECRET",     "PASSWORD", "PASSWD", "PASSPHRASE",
                                           "APIKEY", "CREDENTIAL", "AUTH",     "PRIVATE"};

/* Whether part (len characters) contains word, ignoring case. */
static bool part_has(const char *part, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++) {
        size_t k = 0;
        while (k < wl && toupper((unsigned char)part[i + k]) == word[k])
            k++;
        if (k == wl)
            return true;
    }
    return false;
}

static bool part_is(const char *part, size_t len, const char *word)
{
    return len == strlen(word) && part_has(part, len, word);
}

bool ga_envvar_allowed(const char *name)
{
    for (size_t i = 0; i < sizeof launch_internal_prefixes / sizeof *launch_internal_prefixes; i++)
        if (strncmp(name, launch_internal_prefixes[i], strlen(launch_internal_prefixes[i])) == 0)
            return false;
    for (size_t i = 0; i < sizeof allowed_prefixes / sizeof *allowed_prefixes; i++)
        if (strncmp(name, allowed_prefixes[i], strlen(allowed_prefixes[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof allowed_names / sizeof *allowed_names; i++)
        if (strcmp(name, allowed_names[i]) == 0)
            return true;
    return false;
}

bool ga_envvar_is_secret(const char *name)
{
    const char *p = name;
    while (*p) {
        size_t len = strcspn(p, "_");
        for (size_t i = 0; i < sizeof secret_stems / sizeof *secret_stems; i++)
            if (part_has(p, len, secret_stems[i]))
                return true;
        /* KEY, KEYS, KEY2, ACCESSKEY, UCX_KEYS; but a partition key (NCCL_IB_PKEY) is configuration. */
        if (part_is(p, len, "PASS") ||
            (part_has(p, len, "KEY") && !part_is(p, len, "PKEY") && !part_is(p, len, "PKEYS")))
            return true;
        p += len;
        while (*p == '_')
            p++;
    }
    return false;
}

/* ---- values: credentials by their shape, wherever they sit in a value ---- */

/* Where the redacted value goes: written up to len - 1 bytes, always terminated. */
typedef struct {
    char *out;
    size_t len, used;
} red_buf;

static void put(red_buf *w, const char *s, size_t n)
{
    if (w->used + 1 >= w->len)
        return;
    if (n > w->len - 1 - w->used)
        n = w->len - 1 - w->used;
    memcpy(w->out + w->used, s, n);
    w->used += n;
    w->out[w->used] = '\0';
}

static void put_redacted(red_buf *w)
{
    put(w, GA_REDACTED, strlen(GA_REDACTED));
}

enum { ALNUM = 1, DASH = 2, UNDER = 4, DOT = 8, HEX_ONLY = 16, UPPER_DIGIT = 32 };

static bool in_class(unsigned char c, int cls)
{
    if (cls & HEX_ONLY)
        return isxdigit(c);
    if (cls & UPPER_DIGIT)
        return isupper(c) || isdigit(c);
    return isalnum(c) || ((cls & DASH) && c == '-') || ((cls & UNDER) && c == '_') ||
           ((cls & DOT) && c == '.');
}

static size_t run_of(const char *s, int cls)
{
    size_t n = 0;
    while (s[n] && in_class((unsigned char)s[n], cls))
        n++;
    return n;
}

/* Credentials whose issuers give them a prefix: the prefix, the characters that follow it and how many at
 * least. ctest/common/data/secrets/corpus.tsv holds an example of each. */
static const struct {
    const char *prefix;
    int cls;
    size_t min_tail;
} shapes[] = {
    {"AKIA", UPPER_DIGIT, 16},
    {"ASIA", UPPER_DIGIT, 16},
    {"AGPA", UPPER_DIGIT, 16},
    {"AIDA", UPPER_DIGIT, 16},
    {"AROA", UPPER_DIGIT, 16},
    {"ANPA", UPPER_DIGIT, 16},
    {"sk-", ALNUM | DASH | UNDER, 20},
    {"sk_live_", ALNUM, 10},
    {"sk_test_", ALNUM, 10},
    {"rk_live_", ALNUM, 10},
    {"whsec_", ALNUM, 20},
    {"ghp_", ALNUM, 30},
    {"gho_", ALNUM, 30},
    {"ghu_", ALNUM, 30},
    {"ghs_", ALNUM, 30},
    {"ghr_", ALNUM, 30},
    {"github_pat_", ALNUM | UNDER, 40},
    {"glpat-", ALNUM | DASH | UNDER, 20},
    {"xoxb-", ALNUM | DASH, 10},
    {"xoxp-", ALNUM | DASH, 10},
    {"xoxa-", ALNUM | DASH, 10},
    {"xapp-", ALNUM | DASH, 10},
    {"AIza", ALNUM | DASH | UNDER, 30},
    {"ya29.", ALNUM | DASH | UNDER | DOT, 20},
    {"hf_", ALNUM, 30},
    {"npm_", ALNUM, 30},
    {"pypi-", ALNUM | DASH | UNDER, 50},
    {"SG.", ALNUM | DASH | UNDER | DOT, 40},
    {"dop_v1_", HEX_ONLY, 40},
    {"shpat_", HEX_ONLY, 20},
    {"shpss_", HEX_ONLY, 20},
    {"sq0atp-", ALNUM | DASH | UNDER, 20},
    {"sq0csp-", ALNUM | DASH | UNDER, 20},
    {"glsa_", ALNUM | UNDER, 20},
    {"nvapi-", ALNUM | DASH | UNDER, 40},
    {"r8_", ALNUM, 30},
    {"pcsk_", ALNUM | UNDER, 30},
    {"dckr_pat_", ALNUM | DASH | UNDER, 20},
    {"tskey-", ALNUM | DASH, 20},
    {"dapi", HEX_ONLY, 32},
    {"SK", HEX_ONLY, 32},
    {"key-", HEX_ONLY, 32},
    {"gsk_", ALNUM, 40},
    {"xai-", ALNUM, 40},
};

/* A credential with a known prefix at s (s starts a word): its length, else 0. */
static size_t shaped(const char *s)
{
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        size_t pl = strlen(shapes[i].prefix);
        if (strncmp(s, shapes[i].prefix, pl) != 0)
            continue;
        size_t tail = run_of(s + pl, shapes[i].cls);
        if (tail >= shapes[i].min_tail)
            return pl + tail;
    }
    return 0;
}

/* A JSON Web Token at s: eyJ..., three base64url parts joined by dots (the last may be empty). Its length,
 * else 0. */
static size_t jwt(const char *s)
{
    if (strncmp(s, "eyJ", 3) != 0)
        return 0;
    size_t a = run_of(s, ALNUM | DASH | UNDER);
    if (a < 10 || s[a] != '.')
        return 0;
    size_t b = run_of(s + a + 1, ALNUM | DASH | UNDER);
    if (b < 4 || s[a + 1 + b] != '.')
        return 0;
    return a + 1 + b + 1 + run_of(s + a + 1 + b + 1, ALNUM | DASH | UNDER);
}

/* Whether the len characters at name name a parameter that holds a credential (token=, sig=, AccountKey=,
 * X-Amz-Signature=, password=, client_secret=): the words of ga_envvar_is_secret, and a signature, a key or a
 * password by their short names, in any of its '_', '-' or '.' separated parts. */
static bool secret_param(const char *name, size_t len)
{
    static const char *const words[] = {"TOKEN",  "SECRET",     "PASSWORD", "PASSWD",   "PASSPHRASE",
                                        "APIKEY", "CREDENTIAL", "PRIVATE",  "SIGNATURE"};
    static const char *const whole[] = {"SIG", "PWD", "PASS", "AUTH", "KEY", "CODE", "SESSION"};
    for (size_t i = 0; i < len;) {
        size_t n = 0;
        while (i + n < len && !strchr("_-.", name[i + n]))
            n++;
        for (size_t k = 0; k < sizeof words / sizeof *words; k++)
            if (part_has(name + i, n, words[k]))
                return true;
        for (size_t k = 0; k < sizeof whole / sizeof *whole; k++)
            if (part_is(name + i, n, whole[k]))
                return true;
        /* AccountKey, AccessKey, SharedKey: a part ending in KEY (a partition key, PKEY, is configuration) */
        if (n > 3 && part_is(name + i + n - 3, 3, "KEY") && !part_is(name + i, n, "PKEY"))
            return true;
        i += n + 1;
    }
    return false;
}

/* The characters that end a URL or a parameter's value inside a value (lists use ',' and ';'; ':' is not
 * one: passwords and ports hold it). */
static size_t token_len(const char *s, const char *stops)
{
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && !strchr(stops, s[n]))
        n++;
    return n;
}

/* At s, just past "://": the length of user:password@ up to the '@', else 0. The last '@' of the URL ends it
 * when nothing before it looks like a host and a path ("mirror.example.com/a@b" is a path holding an '@');
 * a password may hold '/', so a ':' before the first '/' also marks user:password. */
static size_t userinfo(const char *s)
{
    size_t n = token_len(s, ",;\"'<>");
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '@')
            at = s + i;
    if (!at)
        return 0;
    size_t pre = (size_t)(at - s), slash = strcspn(s, "/");
    bool colon_first = memchr(s, ':', slash < pre ? slash : pre) != NULL;
    return slash >= pre || colon_first ? pre : 0;
}

/* n characters without '/' that read as random: at least 20, with upper case, lower case and digits, or 32
 * hex digits and more. */
static bool random_chars(const char *t, size_t n)
{
    size_t upper = 0, lower = 0, digit = 0, hex = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        upper += isupper(c) != 0;
        lower += islower(c) != 0;
        digit += isdigit(c) != 0;
        hex += isxdigit(c) != 0;
    }
    return n >= 20 && ((upper && lower && digit) || (n >= 32 && hex == n));
}

/* A run of base64, base64url or hex characters that reads as random: a key without a prefix (an AWS secret
 * access key, which may hold a '/' or two). A path (starting with '/', or with more than two) is judged by
 * its parts: a webhook's secret is one of them. */
static bool looks_random(const char *t, size_t n)
{
    size_t slashes = 0;
    for (size_t i = 0; i < n; i++)
        slashes += t[i] == '/';
    if (t[0] != '/' && slashes <= 2)
        return random_chars(t, n);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && t[j] != '/')
            j++;
        if (random_chars(t + i, j - i))
            return true;
        i = j + 1;
    }
    return false;
}

/* The maximal run at s of the characters keys are written in. */
static size_t key_run(const char *s)
{
    size_t n = 0;
    while (s[n] && (isalnum((unsigned char)s[n]) || strchr("+/=_-", s[n])))
        n++;
    return n;
}

/* Variables whose values a report needs as they are, and whose ordinary values (GPU UUID lists, device and
 * interface names, host lists, library paths) would read as random: the run-of-random-characters rule does
 * not apply to them. Every other rule (prefixed keys, JWTs, URL passwords, secret parameters, PEM) does. */
static const char *const plain_values[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                                           "SLURM_STEP_GPUS",      "SLURM_JOB_NODELIST",
                                           "LD_LIBRARY_PATH",      "NCCL_IB_HCA",
                                           "NCCL_SOCKET_IFNAME",   "UCX_NET_DEVICES"};

bool ga_envvar_value_plain(const char *name)
{
    for (size_t i = 0; name && i < sizeof plain_values / sizeof *plain_values; i++)
        if (strcmp(name, plain_values[i]) == 0)
            return true;
    return false;
}

/* One step of the scan at p (prev: the character before it, '\0' at the start): writes what p starts and
 * returns how many characters it took. */
static size_t redact_step(red_buf *w, const char *p, char prev, bool plain)
{
    bool word_start = !isalnum((unsigned char)prev);
    size_t n;
    if (strncmp(p, "-----BEGIN", 10) == 0) { /* a PEM block: everything after it is the key */
        put_redacted(w);
        return strlen(p);
    }
    if (strncmp(p, "://", 3) == 0) {
        put(w, p, 3);
        if ((n = userinfo(p + 3)) > 0)
            put_redacted(w);
        return 3 + n;
    }
    if (!prev || !(isalnum((unsigned char)prev) || strchr("_-.", prev))) {
        size_t name = run_of(p, ALNUM | DASH | UNDER | DOT);
        if (name && p[name] == '=' && secret_param(p, name)) {
            put(w, p, name + 1);
            n = token_len(p + name + 1, "&;,#\"'");
            if (n)
                put_redacted(w);
            return name + 1 + n;
        }
    }
    if (word_start && ((n = jwt(p)) > 0 || (n = shaped(p)) > 0)) {
        put_redacted(w);
        return n;
    }
    if (!plain && !(isalnum((unsigned char)prev) || (prev && strchr("+/=_-", prev))) &&
        (n = key_run(p)) > 0 && looks_random(p, n)) {
        put_redacted(w);
        return n;
    }
    put(w, p, 1);
    return 1;
}

/* Webhook URLs: the whole URL is the credential (whoever holds it posts to the channel), and its secret part
 * may be any string, so no rule on its characters finds it. Host and path prefix, after the scheme. */
static const char *const webhook_urls[] = {
    "hooks.slack.com/",           "discord.com/api/webhooks/", "discordapp.com/api/webhooks/",
    "outlook.office.com/webhook", ".webhook.office.com/",      "hooks.zapier.com/",
    "api.telegram.org/bot",       "chat.googleapis.com/",      "events.pagerduty.com/integration/",
    "hooks.mattermost.com/",      "maker.ifttt.com/trigger/",  "api.opsgenie.com/"};

/* Keys written as <prefix><public id><separator><secret>: the id part is an account's or a key's name, so a
 * secret cut short at a separator or a character outside the shape would leave the id (or more) behind.
 * SendGrid SG.<id>.<secret>, Slack xox?-<team>-<user>-<secret>, xapp-<n>-<app>-..., Tailscale
 * tskey-<kind>-<id>- <secret>, Pinecone pcsk_<id>_<secret>. */
static const char *const id_key_prefixes[] = {"SG.",   "xoxb-", "xoxp-", "xoxa-",  "xoxe-",
                                              "xoxr-", "xoxs-", "xapp-", "tskey-", "pcsk_"};

/* Whether s, ignoring case, starts with the n characters at prefix. */
static bool starts_nocase(const char *s, const char *prefix, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || tolower((unsigned char)s[i]) != tolower((unsigned char)prefix[i]))
            return false;
    return true;
}

/* A webhook URL whose host (after "://", any user info aside) is one of webhook_urls, at p. */
static bool webhook_at(const char *p)
{
    if (strncmp(p, "://", 3) != 0)
        return false;
    p += 3;
    size_t host = strcspn(p, "/?# \t");
    for (size_t i = 0; i < sizeof webhook_urls / sizeof *webhook_urls; i++) {
        const char *u = webhook_urls[i];
        size_t ul = strlen(u);
        if (u[0] != '.' && starts_nocase(p, u, ul))
            return true;
        /* a subdomain form (".webhook.office.com/"): some host name ending in it */
        for (size_t k = 1; u[0] == '.' && k < host; k++)
            if (starts_nocase(p + k, u, ul))
                return true;
    }
    return false;
}

/* Whether a value holds a credential that only hiding the whole value hides: a webhook URL, or a key with a
 * public id part whose prefix starts a word and is followed by at least a few characters. */
static bool whole_value_secret(const char *value)
{
    for (const char *p = value; *p; p++) {
        if (webhook_at(p))
            return true;
        if (p != value && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        for (size_t i = 0; i < sizeof id_key_prefixes / sizeof *id_key_prefixes; i++) {
            size_t pl = strlen(id_key_prefixes[i]);
            if (strncmp(p, id_key_prefixes[i], pl) == 0 && run_of(p + pl, ALNUM | DASH | UNDER | DOT) >= 8)
                return true;
        }
    }
    return false;
}

static void redact(const char *name, const char *value, char *out, size_t len)
{
    if (!len)
        return;
    red_buf w = {out, len, 0};
    out[0] = '\0';
    if (value && whole_value_secret(value)) {
        put_redacted(&w);
        return;
    }
    bool plain = ga_envvar_value_plain(name);
    char prev = '\0';
    for (const char *p = value ? value : ""; *p;) {
        size_t n = redact_step(&w, p, prev, plain);
        prev = p[n - 1];
        p += n;
    }
}

void ga_envvar_redact_value(const char *value, char *out, size_t len)
{
    redact(NULL, value, out, len);
}

void ga_envvar_redact(const char *name, const char *value, char *out, size_t len)
{
    redact(name, value, out, len);
}

bool ga_envvar_value_is_secret(const char *value)
{
    /* Redaction only ever adds GA_REDACTED in place of what it hides: anything else changed is a secret. */
    size_t n = value ? strlen(value) : 0;
    char *buf = malloc(n * (sizeof GA_REDACTED) + 2);
    if (!buf)
        return true;
    redact(NULL, value, buf, n * (sizeof GA_REDACTED) + 2);
    bool secret = strcmp(buf, value ? value : "") != 0;
    free(buf);
    return secret;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ga_envvars_collect(char *const *envp, ga_envvar_fn fn, void *user)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    const char **sorted = malloc((n + 1) * sizeof *sorted);
    if (!sorted)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        sorted[kept++] = envp[i];
    qsort(sorted, kept, sizeof *sorted, compare_strings);
    for (size_t i = 0; i < kept; i++) {
        const char *eq = strchr(sorted[i], '=');
        if (!eq)
            continue;
        char name[128];
        size_t len = (size_t)(eq - sorted[i]);
        if (len == 0 || len >= sizeof name)
            continue;
        memcpy(name, sorted[i], len);
        name[len] = '\0';
        if (!ga_envvar_allowed(name))
            continue;
        if (ga_envvar_is_secret(name)) {
            fn(name, GA_REDACTED, user);
            continue;
        }
        char value[8192];
        ga_envvar_redact(name, eq + 1, value, sizeof value);
        /* valid UTF-8 (bytes that are not as \xHH): json_string drops what is not (issue 45, item 5) */
        char *clean_name = ga_utf8_text(name), *clean_value = ga_utf8_text(value);
        if (clean_name && clean_value)
            fn(clean_name, clean_value, user);
        free(clean_name);
        free(clean_value);
    }
    free(sorted);
}
