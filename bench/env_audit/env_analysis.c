#include "env_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_host_fields.h"
#include "ga_text.h"

#define VALUE_MAX 1024

/* What the audit knows of one node. */
typedef struct {
    const env_record *leader; /* local rank 0 */
    const char *host;
    int node_index;
    int gpu_count;
} env_node;

/* One audited field: its value for a rank (rank-level fields are also checked within each node) or for a
 * node as a whole (node-level: derived from all of its ranks). */
typedef struct {
    const char *name;
    const char *fault_code;
    ga_severity severity;
    bool per_node; /* node-level */
    int version;   /* env_version_id for version fields, -1 otherwise */
    void (*get)(const env_record *all, int n, const env_node *node, const env_record *rank, char *out,
                size_t len);
    /* Host settings (issue 46): a node whose value is "" was not covered and is left out; a required value
     * is what every node must have whatever the majority; detail names the part that deviates. */
    bool skip_absent;
    const char *required, *why_required;
    void (*detail)(const env_record *leader, const char *majority, char *out, size_t len);
} env_field;

static void get_version(const env_record *rec, int id, char *out, size_t len)
{
    snprintf(out, len, "%s", rec->versions[id].value);
}

static void get_os(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                   size_t len)
{
    (void)all, (void)n, (void)node;
    snprintf(out, len, "%s", r->os);
}

static void get_kernel(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                       size_t len)
{
    (void)all, (void)n, (void)node;
    snprintf(out, len, "%s", r->kernel);
}

static void get_cpu(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                    size_t len)
{
    (void)all, (void)n, (void)node;
    snprintf(out, len, "%s x %d cores", r->cpu_model, r->cores);
}

static void get_numa(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                     size_t len)
{
    (void)all, (void)n, (void)node;
    snprintf(out, len, "%d", r->numa_nodes);
}

/* The NCCL_* variables, which must match for NCCL to behave the same everywhere. */
static void get_nccl_env(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                         size_t len)
{
    (void)all, (void)n, (void)node;
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < r->var_count && used < len; i++)
        if (strncmp(r->vars[i].name, "NCCL_", 5) == 0)
            used += (size_t)snprintf(out + used, len - used, "%s%s=%s", used ? " " : "", r->vars[i].name,
                                     r->vars[i].value);
}

static void get_gpu_count(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                          size_t len)
{
    (void)all, (void)n, (void)r;
    snprintf(out, len, "%d", node->gpu_count);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted distinct GPU names on the node: "NVIDIA H100 80GB HBM3", or a list when a node mixes models. */
static void get_gpu_model(const env_record *all, int n, const env_node *node, const env_record *r, char *out,
                          size_t len)
{
    (void)r;
    const char *names[64];
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (all[i].hdr.node_index != node->node_index)
            continue;
        for (int g = 0; g < all[i].gpu_count && g < ENV_MAX_GPUS && count < 64; g++)
            names[count++] = all[i].gpus[g].name;
    }
    qsort(names, (size_t)count, sizeof *names, compare_strings);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count && used < len; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", names[i]);
}

#define VERSION_FIELD(vname, id)                                                                             \
    static void get_##vname(const env_record *all, int n, const env_node *node, const env_record *r,         \
                            char *out, size_t len)                                                           \
    {                                                                                                        \
        (void)all, (void)n, (void)node;                                                                      \
        get_version(r, id, out, len);                                                                        \
    }
VERSION_FIELD(nvidia_driver, ENV_V_NVIDIA_DRIVER)
VERSION_FIELD(cuda_driver, ENV_V_CUDA_DRIVER)
VERSION_FIELD(cuda_runtime, ENV_V_CUDA_RUNTIME)
VERSION_FIELD(cublas, ENV_V_CUBLAS)
VERSION_FIELD(nccl_library, ENV_V_NCCL_LIBRARY)
VERSION_FIELD(mpi_library, ENV_V_MPI_LIBRARY)

/* Host settings: one value per node, from its first rank (env_host_fields.c). */
#define HOST_FIELD(fname)                                                                                    \
    static void get_##fname(const env_record *all, int n, const env_node *node, const env_record *r,         \
                            char *out, size_t len)                                                           \
    {                                                                                                        \
        (void)all, (void)n, (void)r;                                                                         \
        env_hf_##fname(node->leader, out, len);                                                              \
    }
HOST_FIELD(dimms)
HOST_FIELD(cpu_topology)
HOST_FIELD(vbios)
HOST_FIELD(inforom)
HOST_FIELD(hca_fw)
HOST_FIELD(link_layer)
HOST_FIELD(acs)
HOST_FIELD(iommu)
HOST_FIELD(cmdline)
HOST_FIELD(hugepages)
HOST_FIELD(clocksource)
HOST_FIELD(time_sync)

static const env_field fields[] = {
    {"os", "ENV_OS_MISMATCH", GA_SEV_WARN, false, -1, get_os},
    {"kernel", "ENV_KERNEL_MISMATCH", GA_SEV_FAIL, false, -1, get_kernel},
    {"cpu", "ENV_CPU_MISMATCH", GA_SEV_WARN, false, -1, get_cpu},
    {"numa_nodes", "ENV_NUMA_MISMATCH", GA_SEV_WARN, false, -1, get_numa},
    {"nvidia_driver", "ENV_DRIVER_MISMATCH", GA_SEV_FAIL, false, ENV_V_NVIDIA_DRIVER, get_nvidia_driver},
    {"cuda_driver", "ENV_CUDA_DRIVER_MISMATCH", GA_SEV_FAIL, false, ENV_V_CUDA_DRIVER, get_cuda_driver},
    {"cuda_runtime", "ENV_CUDA_RUNTIME_MISMATCH", GA_SEV_FAIL, false, ENV_V_CUDA_RUNTIME, get_cuda_runtime},
    {"cublas", "ENV_CUBLAS_MISMATCH", GA_SEV_FAIL, false, ENV_V_CUBLAS, get_cublas},
    {"nccl", "ENV_NCCL_MISMATCH", GA_SEV_FAIL, false, ENV_V_NCCL_LIBRARY, get_nccl_library},
    {"mpi", "ENV_MPI_MISMATCH", GA_SEV_FAIL, false, ENV_V_MPI_LIBRARY, get_mpi_library},
    {"nccl_settings", "ENV_NCCL_SETTINGS_MISMATCH", GA_SEV_FAIL, false, -1, get_nccl_env},
    {"gpu_model", "ENV_GPU_MODEL_MISMATCH", GA_SEV_FAIL, true, -1, get_gpu_model},
    {"gpus_per_node", "ENV_GPU_COUNT_MISMATCH", GA_SEV_FAIL, true, -1, get_gpu_count},
    {"dimms", "ENV_DIMM_COUNT_MISMATCH", GA_SEV_FAIL, true, -1, get_dimms, true},
    {"cpu_topology", "ENV_CPU_TOPOLOGY_MISMATCH", GA_SEV_WARN, true, -1, get_cpu_topology, true},
    {"gpu_vbios", "ENV_VBIOS_MISMATCH", GA_SEV_FAIL, true, -1, get_vbios, true, NULL, NULL,
     env_hf_vbios_detail},
    {"gpu_inforom", "ENV_INFOROM_MISMATCH", GA_SEV_FAIL, true, -1, get_inforom, true, NULL, NULL,
     env_hf_inforom_detail},
    {"hca_firmware", "ENV_HCA_FIRMWARE_MISMATCH", GA_SEV_FAIL, true, -1, get_hca_fw, true, NULL, NULL,
     env_hf_hca_fw_detail},
    {"hca_link_layer", "ENV_LINK_LAYER_MISMATCH", GA_SEV_FAIL, true, -1, get_link_layer, true, NULL, NULL,
     env_hf_link_layer_detail},
    {"pcie_acs", "ENV_PCIE_ACS_ENABLED", GA_SEV_FAIL, true, -1, get_acs, true, "off",
     "peer-to-peer between GPU and NIC needs ACS off (NCCL troubleshooting, PCI Access Control Services)",
     env_hf_acs_detail},
    {"iommu", "ENV_IOMMU_MISMATCH", GA_SEV_WARN, true, -1, get_iommu, true},
    {"kernel_cmdline", "ENV_CMDLINE_MISMATCH", GA_SEV_WARN, true, -1, get_cmdline, true},
    {"hugepages", "ENV_HUGEPAGES_MISMATCH", GA_SEV_WARN, true, -1, get_hugepages, true},
    {"clocksource", "ENV_CLOCKSOURCE_MISMATCH", GA_SEV_WARN, true, -1, get_clocksource, true},
    {"time_sync", "ENV_TIME_SYNC_MISMATCH", GA_SEV_WARN, true, -1, get_time_sync, true},
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

int env_node_gpu_count(const env_record *records, int n, int node_index)
{
    const char *seen[ENV_MAX_GPUS * 64];
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (records[i].hdr.node_index != node_index)
            continue;
        for (int g = 0; g < records[i].gpu_count && g < ENV_MAX_GPUS; g++) {
            const char *uuid = records[i].gpus[g].uuid;
            bool dup = false;
            for (int k = 0; k < count && !dup; k++)
                dup = strcmp(seen[k], uuid) == 0;
            if (!dup && count < (int)(sizeof seen / sizeof *seen))
                seen[count++] = uuid;
        }
    }
    return count;
}

static env_node *collect_nodes(const env_record *records, int n, int *node_count)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        if (records[i].hdr.node_index + 1 > count)
            count = records[i].hdr.node_index + 1;
    env_node *nodes = calloc((size_t)count, sizeof *nodes);
    for (int i = 0; nodes && i < n; i++) {
        env_node *node = &nodes[records[i].hdr.node_index];
        if (!node->leader || records[i].hdr.local_rank < node->leader->hdr.local_rank) {
            node->leader = &records[i];
            node->host = records[i].hdr.host;
            node->node_index = records[i].hdr.node_index;
        }
    }
    for (int k = 0; nodes && k < count; k++)
        nodes[k].gpu_count = env_node_gpu_count(records, n, k);
    *node_count = count;
    return nodes;
}

/* Index of the most frequent value (the first such on a tie), and how many share it; with skip_empty, ""
 * (not covered) is never the majority (-1 when every value is ""). */
static int majority_of(char (*values)[VALUE_MAX], int count, bool skip_empty, int *agree)
{
    int best = -1, best_n = 0;
    for (int i = 0; i < count; i++) {
        if (skip_empty && !values[i][0])
            continue;
        int same = 0;
        for (int k = 0; k < count; k++)
            same += strcmp(values[i], values[k]) == 0;
        if (same > best_n) {
            best = i;
            best_n = same;
        }
    }
    *agree = best_n;
    return best;
}

static const char *shown(const char *v)
{
    return *v ? v : "(absent)";
}

/* A node whose value is not the reference (the majority's, or the required one). */
/* The names of detail's "name value, name value" items ("mlx5_3, mlx5_5"): the finding's part, which the
 * summary and the drain Reason show, short; the values stay in the message. Whether there is one. */
static bool part_names(const char *detail, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = detail; *p && used + 1 < len;) {
        size_t n = strcspn(p, " ,");
        int w = snprintf(out + used, len - used, "%s%.*s", used ? ", " : "", (int)n, p);
        used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
        const char *next = strstr(p, ", ");
        if (!next)
            break;
        p = next + 2;
    }
    return out[0] != '\0';
}

static void flag_node(const env_field *fd, const env_node *node, const char *value, const char *majority,
                      int agree, int present, json_t *deviating, ga_findings *f)
{
    char part[VALUE_MAX] = "";
    if (fd->detail)
        fd->detail(node->leader, fd->required ? fd->required : majority, part, sizeof part);
    json_t *dev = json_pack("{s:o, s:i, s:o}", "host", ga_json_text(node->host), "node_index",
                            node->node_index, "value", ga_json_text(value)); /* an environment value */
    if (part[0])
        json_object_set_new(dev, "part", ga_json_text(part));
    json_array_append_new(deviating, dev);
    ga_where where = {node->host, node->node_index, -1, -1, NULL};
    if (fd->required)
        ga_findings_add(f, fd->severity, fd->fault_code, where, "%s is '%s' here, required '%s': %s",
                        fd->name, shown(value), fd->required, fd->why_required);
    else
        ga_findings_add(f, fd->severity, fd->fault_code, where, "%s is '%s' here%s%s, '%s' on %d of %d nodes",
                        fd->name, shown(value), part[0] ? ": " : "", part, shown(majority), agree, present);
    char names[VALUE_MAX];
    if (part_names(part, names, sizeof names))
        ga_findings_set_part(f, "%s", names);
}

/* Ranks of one node that load other libraries or see other settings than their node's first rank. */
static void audit_ranks(const env_field *fd, const env_record *records, int n, const env_node *nodes,
                        ga_findings *f)
{
    char mine[VALUE_MAX], leader[VALUE_MAX];
    for (int i = 0; i < n; i++) {
        const env_node *node = &nodes[records[i].hdr.node_index];
        if (&records[i] == node->leader)
            continue;
        fd->get(records, n, node, &records[i], mine, sizeof mine);
        fd->get(records, n, node, node->leader, leader, sizeof leader);
        if (strcmp(mine, leader) == 0)
            continue;
        ga_where where = {node->host, node->node_index, records[i].hdr.world_rank, -1, NULL};
        ga_findings_add(f, fd->severity, "ENV_RANK_MISMATCH", where,
                        "rank %d sees %s '%s', its node's first rank '%s'", records[i].hdr.world_rank,
                        fd->name, shown(mine), shown(leader));
    }
}

/* One field across nodes: majority, deviating nodes, and ranks that disagree with their own node. */
static json_t *audit_field(const env_field *fd, const env_record *records, int n, const env_node *nodes,
                           int node_count, char (*values)[VALUE_MAX], ga_findings *f)
{
    int present = 0, covered = 0;
    for (int k = 0; k < node_count; k++) {
        if (!nodes[k].leader)
            continue;
        fd->get(records, n, &nodes[k], nodes[k].leader, values[present], VALUE_MAX);
        covered += values[present++][0] != '\0';
    }
    int agree = 0;
    int maj = majority_of(values, present, fd->skip_absent, &agree);
    const char *majority = maj >= 0 ? values[maj] : "";
    const char *ref = fd->required ? fd->required : majority;
    int compared = fd->skip_absent ? covered : present;
    json_t *deviating = json_array();
    for (int k = 0, v = 0; k < node_count; k++) {
        if (!nodes[k].leader)
            continue;
        const char *value = values[v++];
        if ((fd->skip_absent && !*value) || strcmp(value, ref) == 0)
            continue;
        flag_node(fd, &nodes[k], value, majority, agree, compared, deviating, f);
    }
    if (!fd->per_node)
        audit_ranks(fd, records, n, nodes, f);
    json_t *entry =
        json_pack("{s:s, s:o, s:i, s:i, s:o}", "field", fd->name, "majority", ga_json_text(majority), "agree",
                  agree, "nodes", compared, "deviating", deviating);
    if (fd->skip_absent)
        json_object_set_new(entry, "not_covered", json_integer(present - covered));
    if (fd->required)
        json_object_set_new(entry, "required", ga_json_text(fd->required));
    if (fd->version >= 0 && !*majority && nodes[0].leader)
        json_object_set_new(entry, "why_absent", ga_json_text(nodes[0].leader->versions[fd->version].why));
    return entry;
}

/* NCCL_COMM_BLOCKING=0 overrides the programs' blocking communicators (NCCL 2.28): every NCCL call answers
 * ncclInProgress and completes on a thread NCCL starts for it, which the timed loops then measure. The
 * programs still run (they poll it out); the figures are not comparable with nccl-tests'. Once per node. */
static void audit_nonblocking(const env_node *nodes, int node_count, ga_findings *f)
{
    for (int k = 0; k < node_count; k++) {
        const env_record *r = nodes[k].leader;
        for (int i = 0; r && i < r->var_count; i++)
            if (strcmp(r->vars[i].name, "NCCL_COMM_BLOCKING") == 0 && strcmp(r->vars[i].value, "0") == 0)
                ga_findings_add(
                    f, GA_SEV_WARN, "ENV_NCCL_NONBLOCKING", (ga_where){nodes[k].host, k, -1, -1, NULL},
                    "NCCL_COMM_BLOCKING=0: NCCL communicators are non-blocking, each call answers "
                    "ncclInProgress and completes on a thread of NCCL's, and the bandwidth figures "
                    "include that (not comparable with nccl-tests)");
    }
}

/* A rank of a GPU node whose CPU mask holds one CPU (Slurm's default for --ntasks-per-node=8 without
 * --cpus-per-task): NCCL binds its proxy thread, which posts every network transfer, inside that mask
 * (src/graph/topo.cc, ncclTopoGetCpuAffinity), so it shares the one CPU with the rank and the inter-node
 * figures fall for that reason alone (issue 40, finding 6). Once per node, counting its ranks. */
static void audit_cpu_mask(const env_record *records, int n, const env_node *nodes, int node_count,
                           ga_findings *f)
{
    for (int k = 0; k < node_count; k++) {
        int narrow = 0, ranks = 0;
        for (int i = 0; i < n; i++) {
            if (records[i].hdr.node_index != nodes[k].node_index)
                continue;
            ranks++;
            narrow += records[i].cpus_allowed == 1 && records[i].gpu_count > 0;
        }
        if (narrow)
            ga_findings_add(
                f, GA_SEV_WARN, "ENV_CPU_MASK_NARROW", (ga_where){nodes[k].host, k, -1, -1, NULL},
                "%d of %d ranks may run on one CPU only, which NCCL's proxy thread (it posts every "
                "network transfer) shares with the rank: give each rank the CPUs near its GPU "
                "(srun --cpus-per-task, mpirun --bind-to none; docs/deployment.md, \"CPUs for "
                "each rank\")",
                narrow, ranks);
    }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Memory below the nodes' median by more than ENV_MEMORY_TOLERANCE: a missing DIMM of 32 takes 3 %, while
 * healthy nodes of one model differ by the kernel's and firmware's reservations, well under 1 %. Only less
 * memory is flagged; the median is robust to the one node that deviates. */
#define ENV_MEMORY_TOLERANCE 0.01
static json_t *audit_memory(const env_node *nodes, int node_count, ga_findings *f)
{
    double *mem = calloc((size_t)node_count + 1, sizeof *mem), median = 0;
    int m = 0, agree = 0;
    for (int k = 0; mem && k < node_count; k++)
        if (nodes[k].leader && nodes[k].leader->memory_gib > 0)
            mem[m++] = nodes[k].leader->memory_gib;
    if (m > 0) {
        qsort(mem, (size_t)m, sizeof *mem, compare_doubles);
        median = m % 2 ? mem[m / 2] : (mem[m / 2 - 1] + mem[m / 2]) / 2;
    }
    free(mem);
    json_t *deviating = json_array();
    for (int k = 0; k < node_count; k++) {
        double v = nodes[k].leader ? nodes[k].leader->memory_gib : 0;
        if (v <= 0)
            continue;
        if (v >= median * (1 - ENV_MEMORY_TOLERANCE)) {
            agree++;
            continue;
        }
        json_array_append_new(deviating, json_pack("{s:o, s:i, s:f}", "host", ga_json_text(nodes[k].host),
                                                   "node_index", nodes[k].node_index, "value", v));
        ga_findings_add(
            f, GA_SEV_FAIL, "ENV_MEMORY_LOW", (ga_where){nodes[k].host, k, -1, -1, NULL},
            "memory is %.1f GiB here, %.1f GiB less than the nodes' median %.1f GiB (a DIMM missing?)", v,
            median - v, median);
    }
    char text[32];
    snprintf(text, sizeof text, "%.1f", median);
    return json_pack("{s:s, s:o, s:i, s:i, s:o}", "field", "memory_gib", "majority",
                     ga_json_text(m ? text : ""), "agree", agree, "nodes", m, "deviating", deviating);
}

json_t *env_audit_consistency(const env_record *records, int n, const env_audit_opts *opts, ga_findings *f)
{
    int node_count = 0;
    env_node *nodes = collect_nodes(records, n, &node_count);
    char(*values)[VALUE_MAX] = calloc((size_t)node_count + 1, VALUE_MAX);
    json_t *summary = json_array();
    if (!nodes || !values) {
        free(nodes);
        free(values);
        return summary;
    }
    for (size_t i = 0; i < N_FIELDS; i++)
        json_array_append_new(summary, audit_field(&fields[i], records, n, nodes, node_count, values, f));
    json_array_append_new(summary, audit_memory(nodes, node_count, f));
    audit_nonblocking(nodes, node_count, f);
    audit_cpu_mask(records, n, nodes, node_count, f);

    for (int k = 0; opts->expect_gpus > 0 && k < node_count; k++) {
        if (!nodes[k].leader)
            continue;
        ga_where where = {nodes[k].host, k, -1, -1, NULL};
        if (nodes[k].gpu_count < opts->expect_gpus)
            ga_findings_add(f, GA_SEV_FAIL, "GPU_MISSING", where, "%d GPUs visible, %d expected%s%s",
                            nodes[k].gpu_count, opts->expect_gpus, nodes[k].gpu_count ? "" : ": ",
                            nodes[k].gpu_count ? "" : nodes[k].leader->gpu_why);
        else if (nodes[k].gpu_count > opts->expect_gpus)
            ga_findings_add(f, GA_SEV_WARN, "GPU_COUNT_UNEXPECTED", where, "%d GPUs visible, %d expected",
                            nodes[k].gpu_count, opts->expect_gpus);
    }
    free(values);
    free(nodes);
    return summary;
}
