#include "ga_envvars.h"

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

/* Whether s starts with prefix followed by at least n characters of [A-Za-z0-9]. */
static bool shaped(const char *s, const char *prefix, size_t n)
{
    size_t pl = strlen(prefix), k = 0;
    if (strncmp(s, prefix, pl) != 0)
        return false;
    while (isalnum((unsigned char)s[pl + k]))
        k++;
    return k >= n;
}

bool ga_envvar_value_is_secret(const char *value)
{
    /* Credentials by the shape their issuers give them: cloud access keys, API keys, private keys. */
    static const struct {
        const char *prefix;
        size_t min_tail;
    } shapes[] = {{"AKIA", 16},   {"ASIA", 16},  {"sk-live-", 8}, {"sk_live_", 8}, {"sk-", 20},
                  {"ghp_", 20},   {"gho_", 20},  {"github_pat_", 20}, {"xoxb-", 8}, {"xoxp-", 8},
                  {"AIza", 30},   {"glpat-", 16}};
    for (const char *p = value; p && *p; p++) {
        if (p != value && isalnum((unsigned char)p[-1]))
            continue; /* a shape starts a word */
        if (strncmp(p, "-----BEGIN", 10) == 0)
            return true;
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
            if (shaped(p, shapes[i].prefix, shapes[i].min_tail))
                return true;
    }
    return false;
}

void ga_envvar_redact_value(const char *value, char *out, size_t len)
{
    if (!len)
        return;
    if (ga_envvar_value_is_secret(value)) {
        snprintf(out, len, "%s", GA_REDACTED);
        return;
    }
    /* URLs keep their host and path, not their user:password@ (a proxy or a mirror in a search path). */
    size_t o = 0;
    const char *p = value;
    while (*p && o + 1 < len) {
        const char *scheme = strstr(p, "://");
        if (!scheme) {
            size_t n = strlen(p);
            if (n > len - 1 - o)
                n = len - 1 - o;
            memcpy(out + o, p, n);
            o += n;
            break;
        }
        const char *auth = scheme + 3;
        size_t auth_len = strcspn(auth, "/ \t;,");
        const char *at = NULL;
        for (size_t i = 0; i < auth_len; i++)
            if (auth[i] == '@')
                at = auth + i;
        const char *copy_to = at ? auth : auth + auth_len;
        size_t n = (size_t)(copy_to - p);
        if (n > len - 1 - o)
            n = len - 1 - o;
        memcpy(out + o, p, n);
        o += n;
        if (at) {
            o += (size_t)snprintf(out + o, len - o, "%s", GA_REDACTED);
            if (o >= len)
                o = len - 1;
            p = at;
        } else {
            p = copy_to;
        }
    }
    out[o] = '\0';
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
        ga_envvar_redact_value(eq + 1, value, sizeof value);
        fn(name, value, user);
    }
    free(sorted);
}
