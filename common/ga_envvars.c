#include "ga_envvars.h"

#include <ctype.h>
#include <stdlib.h>
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

/* Words that mark a name as holding a credential, matched against its '_'-separated parts. */
static const char *const secret_words[] = {"KEY",         "TOKEN", "SECRET", "PASSWORD",
                                           "PASSWD",      "PASS",  "APIKEY", "CREDENTIAL",
                                           "CREDENTIALS", "AUTH",  "PRIVATE"};

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
        for (size_t i = 0; i < sizeof secret_words / sizeof *secret_words; i++) {
            const char *w = secret_words[i];
            if (strlen(w) != len)
                continue;
            size_t k = 0;
            while (k < len && toupper((unsigned char)p[k]) == w[k])
                k++;
            if (k == len)
                return true;
        }
        p += len;
        while (*p == '_')
            p++;
    }
    return false;
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
        fn(name, ga_envvar_is_secret(name) ? GA_REDACTED : eq + 1, user);
    }
    free(sorted);
}
