#include "env_probe.h"

#include <ctype.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>
#include <sys/utsname.h>

#include "env_host.h"
#include "env_nvml.h"
#include "ga_envvars.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_topo.h"

#if GA_HAVE_CUDA
#include <cublas_v2.h>

#include "ga_nccl.h"
#endif

extern char **environ;

static void set_version(env_record *rec, env_version_id id, const char *value, const char *why)
{
    snprintf(rec->versions[id].value, sizeof rec->versions[id].value, "%s", value ? value : "");
    snprintf(rec->versions[id].why, sizeof rec->versions[id].why, "%s", value ? "" : why);
}

/* "13.0" from CUDA's 13000 */
static void cuda_version_text(int v, char *out, size_t len)
{
    snprintf(out, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void read_os_release(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/etc/os-release", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) != 0)
            continue;
        char *v = line + 12;
        v[strcspn(v, "\n")] = '\0';
        if (*v == '"') {
            v++;
            v[strcspn(v, "\"")] = '\0';
        }
        snprintf(out, len, "%s", v);
        break;
    }
    fclose(f);
}

/* The NVIDIA kernel module's version, as nvidia-smi reports it as "Driver Version". */
static void probe_nvidia_driver(env_record *rec)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) {
        set_version(rec, ENV_V_NVIDIA_DRIVER, NULL,
                    "NVIDIA kernel module not loaded (no /proc/driver/nvidia/version)");
        return;
    }
    char line[512] = "";
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    /* "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  550.54.15  Release Build ..." */
    const char *p = strstr(line, "Module");
    for (p = p ? p : line; *p; p++) {
        if (isdigit((unsigned char)p[0]) && (p == line || p[-1] == ' ')) {
            size_t n = strspn(p, "0123456789.");
            if (memchr(p, '.', n)) {
                char v[32];
                snprintf(v, sizeof v, "%.*s", (int)(n < sizeof v ? n : sizeof v - 1), p);
                set_version(rec, ENV_V_NVIDIA_DRIVER, v, NULL);
                return;
            }
        }
    }
    set_version(rec, ENV_V_NVIDIA_DRIVER, NULL, "cannot parse /proc/driver/nvidia/version");
}

static void probe_versions(env_record *rec)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING], why[160] = "";
    probe_nvidia_driver(rec);

    int v = ga_cuda_driver_version(why, sizeof why);
    cuda_version_text(v, buf, sizeof buf);
    set_version(rec, ENV_V_CUDA_DRIVER, v ? buf : NULL, why);
    v = ga_cuda_runtime_version(why, sizeof why);
    cuda_version_text(v, buf, sizeof buf);
    set_version(rec, ENV_V_CUDA_RUNTIME, v ? buf : NULL, why);

#if GA_HAVE_CUDA
    int maj = 0, min = 0, pat = 0;
    if (cublasGetProperty(MAJOR_VERSION, &maj) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &min) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &pat) == CUBLAS_STATUS_SUCCESS) {
        snprintf(buf, sizeof buf, "%d.%d.%d", maj, min, pat);
        set_version(rec, ENV_V_CUBLAS, buf, NULL);
    } else {
        set_version(rec, ENV_V_CUBLAS, NULL, "cublasGetProperty failed");
    }
    char lib[32], hdr[32];
    ga_nccl_versions(lib, sizeof lib, hdr, sizeof hdr);
    set_version(rec, ENV_V_NCCL_LIBRARY, lib, NULL);
    set_version(rec, ENV_V_NCCL_HEADER, hdr, NULL);
#else
    set_version(rec, ENV_V_CUBLAS, NULL, "built without CUDA");
    set_version(rec, ENV_V_NCCL_LIBRARY, NULL, "built without NCCL");
    set_version(rec, ENV_V_NCCL_HEADER, NULL, "built without NCCL");
#endif

    int len = 0;
    MPI_Get_library_version(buf, &len);
    buf[strcspn(buf, "\n,")] = '\0'; /* "Open MPI v4.1.4" without the package and date details */
    set_version(rec, ENV_V_MPI_LIBRARY, buf, NULL);

    unsigned hv = hwloc_get_api_version();
    snprintf(buf, sizeof buf, "%u.%u.%u", hv >> 16, (hv >> 8) & 0xff, hv & 0xff);
    set_version(rec, ENV_V_HWLOC, buf, NULL);
    set_version(rec, ENV_V_JANSSON, jansson_version_str(), NULL);
}

static void probe_host(env_record *rec, hwloc_topology_t topo)
{
    read_os_release(rec->os, sizeof rec->os);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    rec->cpus_allowed = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
    struct utsname u;
    snprintf(rec->kernel, sizeof rec->kernel, "%s", uname(&u) == 0 ? u.release : "unknown");
    snprintf(rec->cpu_model, sizeof rec->cpu_model, "unknown");
    if (!topo)
        return;
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (model)
        snprintf(rec->cpu_model, sizeof rec->cpu_model, "%s", model);
    rec->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    rec->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    rec->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    rec->host.sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    rec->host.threads_per_core = rec->cores > 0 ? rec->pus / rec->cores : 0;
    rec->memory_gib = (double)hwloc_get_root_obj(topo)->total_memory / (1024.0 * 1024.0 * 1024.0);
}

static void probe_gpus(env_record *rec, hwloc_topology_t topo)
{
    int n = ga_gpu_count(rec->gpu_why, sizeof rec->gpu_why);
    rec->gpu_count = n;
    for (int i = 0; i < n && i < ENV_MAX_GPUS; i++) {
        ga_gpu_info g;
        char err[160];
        env_gpu *out = &rec->gpus[i];
        if (ga_gpu_query(i, &g, err, sizeof err) != 0) {
            snprintf(out->name, sizeof out->name, "error: %s", err);
            out->numa_node = -1;
            continue;
        }
        snprintf(out->name, sizeof out->name, "%s", g.name);
        snprintf(out->uuid, sizeof out->uuid, "%s", g.uuid);
        snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%s", g.pci_bus_id);
        out->memory_gib = (float)g.memory_gib;
        out->sm_count = g.sm_count;
        out->cc_major = g.cc_major;
        out->cc_minor = g.cc_minor;
        out->numa_node = ga_topo_numa_of_pci(topo, g.pci_bus_id);
    }
}

static void probe_nics(env_record *rec, hwloc_topology_t topo)
{
    for (hwloc_obj_t os = NULL;
         topo && (os = hwloc_get_next_osdev(topo, os)) && rec->nic_count < ENV_MAX_NICS;) {
        hwloc_obj_osdev_type_t t = os->attr->osdev.type;
        if (t != HWLOC_OBJ_OSDEV_OPENFABRICS && t != HWLOC_OBJ_OSDEV_NETWORK)
            continue;
        env_nic *nic = &rec->nics[rec->nic_count++];
        snprintf(nic->name, sizeof nic->name, "%s", os->name ? os->name : "?");
        snprintf(nic->kind, sizeof nic->kind, "%s", t == HWLOC_OBJ_OSDEV_OPENFABRICS ? "rdma" : "net");
        const char *ll = hwloc_obj_get_info_by_name(os, "Port1LinkLayer");
        const char *st = hwloc_obj_get_info_by_name(os, "Port1State");
        snprintf(nic->link_layer, sizeof nic->link_layer, "%s", ll ? ll : "");
        snprintf(nic->state, sizeof nic->state, "%s", st ? st : "");
        nic->numa_node = ga_topo_numa_of_obj(topo, os);
    }
}

static void keep_var(const char *name, const char *value, void *user)
{
    env_record *rec = user;
    if (rec->var_count == ENV_MAX_VARS) {
        rec->vars_dropped++;
        return;
    }
    env_var *v = &rec->vars[rec->var_count++];
    snprintf(v->name, sizeof v->name, "%s", name);
    if (strlen(value) >= sizeof v->value)
        snprintf(v->value, sizeof v->value, "%.*s...", (int)sizeof v->value - 4, value);
    else
        snprintf(v->value, sizeof v->value, "%s", value);
}

/* The kernel's clock discipline as NTP or chrony left it: adjtimex with no mode set only reads (no root). */
static void probe_time_sync(env_host *h)
{
    struct timex tx = {.modes = 0};
    int state = adjtimex(&tx);
    if (state < 0)
        return;
    snprintf(h->time_sync, sizeof h->time_sync, "%s",
             state == TIME_ERROR || (tx.status & STA_UNSYNC) ? "unsynchronized" : "synchronized");
}

void env_probe(const ga_ctx *ctx, env_record *rec)
{
    memset(rec, 0, sizeof *rec);
    ga_record_header_init(ctx, &rec->hdr);
    hwloc_topology_t topo = ga_topo_get();
    probe_host(rec, topo);
    probe_versions(rec);
    probe_gpus(rec, topo);
    probe_nics(rec, topo);
    env_host_probe("", &rec->host);
    probe_time_sync(&rec->host);
    /* the audit reads a node's settings from its first rank: NVML's start-up once per node is enough */
    if (ctx->local_rank == 0)
        env_nvml_firmware(&rec->host, rec->host.fw_why, sizeof rec->host.fw_why);
    ga_envvars_collect(environ, keep_var, rec);
}
