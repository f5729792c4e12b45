/* The run's facts for a profile's placeholders (profile.h): GPUs per node and the SKU baseline. Reads the
 * environment and /proc, so it is apart from the pure profile.c. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "ga_parse.h"
#include "launch_plan.h"
#include "profile.h"
#include "baseline.h"
#include "suite_util.h"

/* Every node of the hostfile with the same slots: one rank per GPU, so that many GPUs; else 0 with why. */
static int hostfile_gpus(const suite_hostlist *h, const char **why)
{
    int slots = h->host[0].slots;
    for (size_t i = 0; i < h->n; i++) {
        if (h->host[i].slots <= 0) {
            *why = "a hostfile node gives no slots=";
            return 0;
        }
        if (h->host[i].slots != slots) {
            *why = "the hostfile's nodes give different slots=";
            return 0;
        }
    }
    return slots;
}

/* The model of this machine's first GPU as the driver names it ("NVIDIA H100 80GB HBM3"), else "". */
static void local_gpu_model(char *model, size_t len)
{
    model[0] = '\0';
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    struct dirent *e;
    while (d && !model[0] && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[600], line[256];
        snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", e->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "Model:", 6) == 0) {
                char *v = line + 6;
                while (isspace((unsigned char)*v))
                    v++;
                v[strcspn(v, "\r\n")] = '\0';
                snprintf(model, len, "%s", v);
                break;
            }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
}

int suite_profile_env_make(const suite_profile_run_facts *in, suite_profile_env *env, json_t **baseline,
                           char *err, size_t errlen)
{
    memset(env, 0, sizeof *env);
    *baseline = NULL;
    env->tolerance_pct = in->tolerance_pct;
    env->burn_s = in->burn_s;
    env->world_size = in->np;
    bool have_hosts = in->hosts && in->hosts->n > 0;
    if (have_hosts) {
        env->expect_gpus = hostfile_gpus(in->hosts, &env->expect_gpus_why);
        env->node_count = (int)in->hosts->n;
        if (!env->world_size && suite_hostlist_slots(in->hosts) > 0)
            env->world_size = (int)suite_hostlist_slots(in->hosts);
    } else if (in->launch_kind == SUITE_LAUNCH_SLURM) {
        long n = 0;
        char perr[128];
        const char *g = getenv("SLURM_GPUS_ON_NODE");
        if (g && ga_parse_long(g, 1, 1024, &n, perr, sizeof perr) == 0)
            env->expect_gpus = (int)n;
        else
            env->expect_gpus_why = "Slurm sets no SLURM_GPUS_ON_NODE (ask for --gpus-per-node)";
    } else if (in->launch_kind == SUITE_LAUNCH_LOCAL) {
        env->node_count = 1;
        env->expect_gpus = in->local_gpus;
        if (!in->local_gpus)
            env->expect_gpus_why = "no GPU on this machine and no hostfile slots to expect GPUs from";
    } else {
        env->expect_gpus_why = "GPUs per node unknown";
    }
    env->gpu = in->local_gpus > 0 || in->launch_kind != SUITE_LAUNCH_LOCAL;

    const char *spec = in->baseline_spec ? in->baseline_spec : "auto";
    char path[4096], model[200];
    if (strcmp(spec, "none") == 0) {
        env->no_baseline_why = "--baseline none";
        return 0;
    }
    if (strcmp(spec, "auto") == 0) {
        local_gpu_model(model, sizeof model);
        if (!model[0]) {
            env->no_baseline_why =
                "GPU model unknown (no GPU on this machine to read it from; --baseline FILE gives one)";
            return 0;
        }
        if (suite_baseline_find_shipped(model, path, sizeof path) != 0) {
            env->no_baseline_why = "no shipped baseline for this GPU model";
            return 0;
        }
        spec = path;
    }
    char lerr[512], verr[256];
    json_t *b = suite_load_json(spec, lerr, sizeof lerr);
    if (!b || suite_baseline_validate(b, verr, sizeof verr) != 0) {
        snprintf(err, errlen, "%s", b ? verr : lerr);
        json_decref(b);
        return -1;
    }
    *baseline = b;
    env->baseline = b;
    return 0;
}
