/* node_health: the hardware faults GPU clusters have, named per node, GPU, link and HCA. Every rank checks
 * its GPUs through NVML (loaded at run time); one rank per node checks the node (kernel log Xids, InfiniBand
 * / RoCE ports, GPUDirect RDMA, GPU-to-HCA locality). Checks and codes: docs/node_health.md. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_headline.h"
#include "ga_log.h"
#include "ga_parse.h"
#include "ga_engine.h"
#include "ga_report.h"
#include "ga_text.h"
#include "nh_analysis.h"
#include "nh_fabric.h"
#include "nh_json.h"
#include "nh_node.h"
#include "nh_nvml.h"
#include "nh_opts.h"

#define NH_KERNEL_LOG_MAX (64u << 20) /* a kernel log larger than this is read in part */

/* The live kernel log: /dev/kmsg (every record, without blocking), else `dmesg`. NULL with why. */
static char *read_live_kernel_log(size_t *len, char *source, size_t srclen, char *why, size_t whylen)
{
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
    if (fd >= 0) {
        size_t cap = 1u << 20, used = 0;
        char *buf = malloc(cap + 1);
        while (buf) {
            if (cap - used < 8192) {
                if (cap >= NH_KERNEL_LOG_MAX)
                    break;
                char *bigger = realloc(buf, cap * 2 + 1);
                if (!bigger)
                    break;
                buf = bigger;
                cap *= 2;
            }
            ssize_t n = read(fd, buf + used, cap - used);
            if (n < 0 && errno == EPIPE) /* a record was overwritten while reading: go on */
                continue;
            if (n <= 0)
                break; /* EAGAIN: no more records */
            used += (size_t)n;
            if (buf[used - 1] != '\n')
                buf[used++] = '\n';
        }
        close(fd);
        if (buf && used) {
            buf[used] = '\0';
            *len = used;
            snprintf(source, srclen, "/dev/kmsg");
            return buf;
        }
        free(buf);
    }
    int kmsg_errno = errno;
    FILE *p = popen("dmesg 2>/dev/null", "r");
    if (p) {
        size_t cap = 1u << 20, used = 0, got;
        char *buf = malloc(cap + 1);
        while (buf && (got = fread(buf + used, 1, cap - used, p)) > 0) {
            used += got;
            if (used == cap) {
                char *bigger = cap < NH_KERNEL_LOG_MAX ? realloc(buf, cap * 2 + 1) : NULL;
                if (!bigger)
                    break;
                buf = bigger;
                cap *= 2;
            }
        }
        int status = pclose(p);
        if (buf && status == 0 && used) {
            buf[used] = '\0';
            *len = used;
            snprintf(source, srclen, "dmesg");
            return buf;
        }
        free(buf);
    }
    snprintf(why, whylen, "/dev/kmsg: %s; dmesg: no output (try running as root, or --kernel-log FILE)",
             strerror(kmsg_errno));
    return NULL;
}

static void probe_node(const nh_opts *o, nh_record *r)
{
    r->node_checker = 1;
    nh_sysfs_read_node(o->sysfs_root, r);
    /* the job's compute ports as NCCL on this node will take them (net_ib.cc reads NCCL_IB_HCA per process)
     */
    const char *ib_hca = getenv("NCCL_IB_HCA");
    snprintf(r->ib_hca_env, sizeof r->ib_hca_env, "%s", ib_hca ? ib_hca : "");
    size_t len = 0;
    char *text = NULL;
    if (o->kernel_log[0]) {
        text = nh_read_text_file(o->kernel_log, NH_KERNEL_LOG_MAX, &len, r->kernel_log_why,
                                 sizeof r->kernel_log_why);
        snprintf(r->kernel_log_source, sizeof r->kernel_log_source, "%.95s", o->kernel_log);
    } else
        text = read_live_kernel_log(&len, r->kernel_log_source, sizeof r->kernel_log_source,
                                    r->kernel_log_why, sizeof r->kernel_log_why);
    if (text) {
        r->kernel_log_read = 1;
        /* the live log's window ends now (seconds since boot); a replayed one's at its newest line */
        double now = -1;
        FILE *up = o->kernel_log[0] ? NULL : fopen("/proc/uptime", "r");
        if (up) {
            if (fscanf(up, "%lf", &now) != 1)
                now = -1;
            fclose(up);
        }
        nh_kernel_log_parse(text, len, o->xid_since_s, now, r);
        free(text);
    }
}

/* The analysis's options from the command line's. */
static nh_check_opts check_opts_of(const nh_opts *o)
{
    return (nh_check_opts){.skus = &o->skus,
                           .sku = o->sku[0] ? o->sku : NULL,
                           .expect_gpus = o->expect_gpus,
                           .expect_hcas = o->expect_hcas,
                           .expect_ib_rate_gbps = o->expect_ib_rate_gbps,
                           .ib_hcas = o->ib_hcas};
}

/* Rank 0, before the report takes the records: each port's role in it, as the analysis judges it. */
static void fill_port_roles(ga_run *run)
{
    nh_check_opts copts = check_opts_of(run->opts);
    nh_fill_port_roles(run->all, run->ctx.world_size, &copts);
}

static int analyse_and_report(ga_run *run)
{
    const nh_opts *o = run->opts;
    nh_record *all = run->all;
    int n = run->ctx.world_size;
    nh_check_opts copts = check_opts_of(o);
    json_t *report = run->report->json;
    ga_findings *findings = &run->report->findings;
    nh_outcome out;
    if (nh_check(all, n, &copts, findings, &out))
        GA_FATAL(GA_EXIT_INTERNAL, "the SKU table or --sku was not checked before the analysis");
    ga_log("HEALTH", "%d node%s: %d GPUs checked%s, %d of %d compute IB ports active, %d Xids (%d failing)",
           out.nodes, out.nodes == 1 ? "" : "s", out.gpus_checked,
           out.nodes_without_nvml ? " (NVML unavailable on some nodes)" : "", out.ports_active,
           out.ports_checked, out.xids, out.xids_failing);
    ga_findings_log(findings, "HEALTH");

    json_object_set_new(
        report, "summary",
        json_pack("{s:o, s:o, s:o, s:o, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}}",
                  "sysfs_root", ga_json_text(o->sysfs_root), "kernel_log",
                  ga_json_text(o->kernel_log[0] ? o->kernel_log : "live"), "sku",
                  ga_json_text(o->sku[0] ? o->sku : "by GPU model"), "sku_file",
                  ga_json_text(o->sku_file[0] ? o->sku_file : "built-in"), "checked", "nodes", out.nodes,
                  "gpus_checked", out.gpus_checked, "gpus_expected", out.gpus_expected, "nodes_without_nvml",
                  out.nodes_without_nvml, "nodes_without_kernel_log", out.nodes_without_kernel_log,
                  "nodes_without_ib", out.nodes_without_ib, "ports_checked", out.ports_checked,
                  "ports_active", out.ports_active, "xids", out.xids, "xids_failing", out.xids_failing,
                  "gpus_locality_unknown", out.gpus_locality_unknown));
    /* what each node offers between nodes: gpuaccept run's floor across nodes and --expect-net (issue 25) */
    json_object_set_new(json_object_get(report, "summary"), "fabric", nh_fabric_json(all, n, &copts));
    ga_report_add_headline(report,
                           &(ga_headline){.name = "gpus_checked",
                                          .label = "GPUs checked through NVML",
                                          .value = out.gpus_checked,
                                          .unit = "GPUs",
                                          .higher_is_better = true,
                                          .reference = out.gpus_expected >= 0 ? out.gpus_expected : NAN,
                                          .reference_label = out.gpus_expected >= 0 ? "expected" : NULL});
    ga_report_add_headline(report, &(ga_headline){.name = "ib_ports_active",
                                                  .label = "compute InfiniBand/RoCE ports active",
                                                  .value = out.ports_active,
                                                  .unit = "ports",
                                                  .higher_is_better = true,
                                                  .reference = out.ports_checked,
                                                  .reference_label = "found"});
    ga_report_add_headline(report, &(ga_headline){.name = "health_failures",
                                                  .label = "failed health checks",
                                                  .value = (double)out.fail,
                                                  .unit = "findings",
                                                  .reference = NAN});
    ga_report_add_headline(report, &(ga_headline){.name = "health_warnings",
                                                  .label = "warnings, including what could not be checked",
                                                  .value = (double)out.warn,
                                                  .unit = "findings",
                                                  .reference = NAN});
    return GA_GO_ON;
}

/* The SKU table (the built-in one unless --sku-file) and --sku checked in it; the start line. */
static int prepare(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    nh_opts *opts = run->opts;
    if (!opts->skus_loaded) {
        char why[256];
        if (nh_sku_table_parse(nh_builtin_skus, &opts->skus, why, sizeof why))
            GA_FATAL(GA_EXIT_INTERNAL, "the built-in SKU file does not parse: %s", why);
    }
    if (opts->sku[0] && !nh_sku_by_name(&opts->skus, opts->sku)) {
        ga_error_once(nh_command_line.name, "--sku: no SKU '%s' in the SKU file", opts->sku);
        return GA_EXIT_USAGE;
    }
    ga_log("HEALTH", "node_health: %d rank%s on %d node%s, launched by %s; sysfs %s, kernel log %s",
           ctx->world_size, ga_plural(ctx->world_size), ctx->node_count, ga_plural(ctx->node_count),
           ctx->launcher.detail, opts->sysfs_root, opts->kernel_log[0] ? opts->kernel_log : "live");
    return GA_GO_ON;
}

/* Every rank its GPUs, one rank per node the node: nothing here fails the run, what cannot be checked is
 * recorded as such. */
static ga_measured measure(ga_run *run)
{
    const nh_opts *opts = run->opts;
    nh_record *mine = run->mine;
    ga_phase("checking GPUs through NVML");
    nh_nvml_probe(run->ctx.local_rank, run->ctx.local_size, opts->sysfs_root, mine);
    if (run->ctx.local_rank == 0) {
        ga_phase("checking the node (kernel log, InfiniBand, GPUDirect RDMA)");
        probe_node(opts, mine);
    }
    return GA_MEASURED;
}

static void opts_init(void *opts)
{
    *(nh_opts *)opts =
        (nh_opts){.sysfs_root = "/sys", .expect_gpus = -1, .expect_hcas = -1, .expect_ib_rate_gbps = -1};
}

/* -T/--wait-timeout: every wait from the first collective on (0: --timeout alone) */
static double wait_bound(const ga_run *run)
{
    return ((const nh_opts *)run->opts)->wait_timeout_s;
}

static const ga_program_def node_health_program = {
    .cli = &nh_command_line,
    .tag = "HEALTH",
    .opts_size = sizeof(nh_opts),
    .opts_init = opts_init,
    .record_size = sizeof(nh_record),
    .record_json = nh_record_json,
    .wait_bound = wait_bound,
    .prepare = prepare,
    .measure = measure,
    .before_report = fill_port_roles,
    .report = analyse_and_report,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &node_health_program);
}
