#include "ar_nccltests.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ga_envvars.h"
#include "ga_text.h"

/* ---- numbers and times ---- */

void ar_nt_float(double v, int width, char *buf)
{
    /* the widest precision that fits, then scientific notation: nccl-tests' getFloatStr */
    static const char *const fixed[] = {"%*.2f", "%*.1f", "%*.0f"};
    for (int i = 0; i < 3; i++)
        if (snprintf(buf, (size_t)width + 1, fixed[i], width, v) <= width)
            return;
    snprintf(buf, (size_t)width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

void ar_nt_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

int ar_nt_parse_pci(const char *bus_id, uint32_t *domain, uint32_t *bus, uint32_t *device)
{
    unsigned d, b, v;
    if (!bus_id || sscanf(bus_id, "%x:%x:%x", &d, &b, &v) != 3)
        return -1;
    *domain = d;
    *bus = b;
    *device = v;
    return 0;
}

/* ---- stdout ---- */

void ar_nt_device_line(char *buf, size_t len, const ar_nt_device *d)
{
    snprintf(buf, len, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", d->rank,
             d->group, d->pid, d->host, d->device, d->pci_domain, d->pci_bus, d->pci_device, d->name);
}

void ar_nt_preamble(FILE *out, const ar_nt_config *c, const ar_nt_device *devs, int n)
{
    bool by_factor = c->step_factor > 1;
    fprintf(out, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", AR_NT_VERSION, c->nccl_headers,
            c->nccl_library);
    fprintf(out, "# Collective test starting: %s\n", c->program);
    fprintf(
        out,
        "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg iters: "
        "%d validation: %d graph: %d unalign: %d\n",
        1, 1, (long)c->min_bytes, (long)c->max_bytes, (long)(by_factor ? c->step_factor : c->step_bytes),
        by_factor ? "factor" : "bytes", c->warmup, c->iters, c->agg_iters, c->check, c->graph, c->unalign);
    if (c->blocking == 1)
        fprintf(out, "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
    if (c->blocking == 2)
        fprintf(out, "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n");
    if (c->blocking == 3)
        fprintf(out, "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes "
                     "barrier \n");
    if (c->per_iter) {
        /* nccl-tests times iterations with CUDA events; gpuaccept with the host clock, and says so */
        fprintf(out, "# Per-Iteration Report: host clock timing; i_* uses max over process rows");
        if (c->per_iter_skip)
            fprintf(out, "; summary skips first %d iterations", c->per_iter_skip);
        fprintf(out, " \n");
    }
    fprintf(out, "#\n# Using devices\n");
    for (int i = 0; i < n; i++) {
        char line[512];
        ar_nt_device_line(line, sizeof line, &devs[i]);
        fputs(line, out);
    }
}

void ar_nt_header(FILE *out, const ar_nt_config *c)
{
    const char *ts_label = c->timestamps ? "timestamp" : "",
               *ts_units = c->timestamps ? "%Y-%m-%d %H:%M:%S" : "";
    int ts_pad = c->timestamps ? 19 : 0;
    const char *t = c->cputime ? "cputime" : "time";
    const char *slowest = c->show_slowest ? " slowest rank (max time)" : "";
    fprintf(out, "#\n");
    if (c->per_iter) {
        fprintf(out,
                "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                     "
                "           in-place (+ per-iteration)\n",
                "", "", "", "", "");
        fprintf(out,
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  "
                "%7s  %7s  "
                "%7s  %7s %*s%s\n",
                "size", "count", "type", "redop", "root", t, "algbw", "busbw", "#wrong", "i_min", "i_max",
                "i_p99", "i_cv%", t, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%", ts_pad,
                ts_label, slowest);
        fprintf(out,
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  "
                "%7s  %7s  "
                "%7s  %7s %*s\n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)",
                "(%)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)", ts_pad, ts_units);
    } else {
        fprintf(
            out,
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
            "", "", "", "", "");
        fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s%s\n", "size",
                "count", "type", "redop", "root", t, "algbw", "busbw", "#wrong", t, "algbw", "busbw",
                "#wrong", ts_pad, ts_label, slowest);
        fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
                ts_pad, ts_units);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* nccl-tests' nearest-rank percentile index */
static int percentile_index(int n, int pct)
{
    int i = (n * pct + 99) / 100 - 1;
    return i < n - 1 ? i : n - 1;
}

void ar_nt_iter_stats(ar_nt_iter *it)
{
    int n = it->n - it->skipped;
    it->min = it->max = it->avg = it->p50 = it->p95 = it->p99 = it->stdev = it->cv_pct = 0;
    if (n <= 0)
        return;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return;
    memcpy(s, it->times + it->skipped, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0, var = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    it->avg = sum / n;
    for (int i = 0; i < n; i++)
        var += (s[i] - it->avg) * (s[i] - it->avg);
    it->min = s[0];
    it->max = s[n - 1];
    it->p50 = s[n / 2];
    it->p95 = s[percentile_index(n, 95)];
    it->p99 = s[percentile_index(n, 99)];
    it->stdev = sqrt(var / n);
    it->cv_pct = it->avg > 0 ? it->stdev / it->avg * 100.0 : 0.0;
    free(s);
}

int ar_nt_line(char *buf, size_t len, const ar_nt_config *c, const char *type, const char *op, int root,
               const ar_line *l, const ar_nt_iter *it, const char *timestamp, int slowest_rank,
               const char *slowest_host)
{
    char root_s[32];
    snprintf(root_s, sizeof root_s, "%6i", root);
    int n =
        snprintf(buf, len, "%12li  %12li  %8s  %6s  %6s", (long)l->bytes, (long)l->count, type, op, root_s);
    for (int pl = 0; pl < AR_PLACEMENTS && n > 0 && (size_t)n < len; pl++) {
        char t[16], alg[16], bus[16];
        ar_nt_float(l->agg[pl].time_s * 1e6, 7, t);
        ar_nt_float(l->algbw[pl], 6, alg);
        ar_nt_float(l->busbw[pl], 6, bus);
        if (l->agg[pl].wrong >= 0)
            n += snprintf(buf + n, len - (size_t)n, "  %7s  %6s  %6s  %6g", t, alg, bus,
                          (double)l->agg[pl].wrong);
        else
            n += snprintf(buf + n, len - (size_t)n, "  %7s  %6s  %6s    N/A", t, alg, bus);
        if (it && (size_t)n < len) {
            char mn[16], mx[16], p99[16], cv[16];
            ar_nt_float(it[pl].min * 1e6, 7, mn);
            ar_nt_float(it[pl].max * 1e6, 7, mx);
            ar_nt_float(it[pl].p99 * 1e6, 7, p99);
            ar_nt_float(it[pl].cv_pct, 7, cv);
            n += snprintf(buf + n, len - (size_t)n, "  %7s  %7s  %7s  %7s", mn, mx, p99, cv);
        }
    }
    if (timestamp && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "%21s", timestamp);
    if (c->show_slowest && n > 0 && (size_t)n < len) {
        char t[16];
        ar_nt_float(l->agg[0].max_s * 1e6, 7, t);
        n += snprintf(buf + n, len - (size_t)n, "  rank %d %s (%s us)", slowest_rank, slowest_host, t);
    }
    if (n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "\n");
    return n;
}

void ar_nt_mem_string(int64_t bytes, char *buf, size_t len)
{
    double amount = (double)bytes, mag = fabs(amount);
    const char *unit = "B";
    if (mag >= 1024.0 * 1024.0 * 1024.0)
        unit = "GB", amount /= 1024.0 * 1024.0 * 1024.0;
    else if (mag >= 1024.0 * 1024.0)
        unit = "MB", amount /= 1024.0 * 1024.0;
    else if (mag >= 1024.0)
        unit = "KB", amount /= 1024.0;
    mag = fabs(amount);
    snprintf(buf, len, "%.*f %s", mag < 10.0 ? 2 : mag < 100.0 ? 1 : 0, amount, unit);
}

void ar_nt_footer(FILE *out, const ar_nt_config *c, int out_of_bounds, double avg_busbw, double min_bw,
                  const int64_t *mem_used)
{
    const char *bw_verdict = min_bw < 0 ? "" : avg_busbw < min_bw * 0.9 ? "FAILED" : "OK";
    fprintf(out, "# %-20s : %d %s\n", "Out of bounds values", out_of_bounds, out_of_bounds ? "FAILED" : "OK");
    fprintf(out, "# %-20s : %g %s\n", "Avg bus bandwidth", avg_busbw, bw_verdict);
    if (mem_used) {
        static const char *const names[3] = {"Initialization", "User-Allocated", "Collective"};
        char line[256] = "", amount[32];
        int64_t total = 0;
        size_t at = 0;
        for (int i = 0; i < 3; i++) {
            ar_nt_mem_string(mem_used[i], amount, sizeof amount);
            at += (size_t)snprintf(line + at, sizeof line - at, "%s %s %s", names[i], amount,
                                   i < 2 ? "| " : "");
            total += mem_used[i];
        }
        ar_nt_mem_string(total, amount, sizeof amount);
        fprintf(out, "# %-20s : %s| Total  %s\n", "GPU memory usage", line, amount);
    }
    fprintf(out, "#\n# Collective test concluded: %s\n#\n\n", c->program);
}

/* ---- -J ---- */

static void add_env(const char *name, const char *value, void *user)
{
    /* nccl-tests records the whole environment; gpuaccept only NCCL's and CUDA's, secrets redacted */
    if (strncmp(name, "NCCL_", 5) != 0 && strncmp(name, "CUDA_", 5) != 0)
        return;
    char *kv = malloc(strlen(name) + strlen(value) + 2);
    if (!kv)
        return;
    sprintf(kv, "%s=%s", name, value);
    json_array_append_new(user, ga_json_text(kv)); /* an environment value: any bytes */
    free(kv);
}

json_t *ar_nt_json_devices(const ar_nt_device *devs, int n)
{
    json_t *devices = json_array();
    for (int i = 0; i < n; i++) {
        char hex[32];
        snprintf(hex, sizeof hex, "%04x:%02x:%02x", devs[i].pci_domain, devs[i].pci_bus, devs[i].pci_device);
        json_array_append_new(devices,
                              json_pack("{s:i, s:i, s:i, s:o, s:i, s:s, s:o}", "rank", devs[i].rank, "group",
                                        devs[i].group, "pid", devs[i].pid, "hostname",
                                        ga_json_text(devs[i].host), "device", devs[i].device, "device_hex",
                                        hex, "device_info", ga_json_text(devs[i].name)));
    }
    return devices;
}

json_t *ar_nt_json_new(const ar_nt_config *c, int argc, char **argv, char **envp)
{
    char now[64];
    ar_nt_now(now, sizeof now);
    json_t *doc = json_object(), *args = json_array(), *env = json_array();
    for (int i = 0; i < argc; i++)
        json_array_append_new(args, ga_json_text(argv[i]));
    if (envp)
        ga_envvars_collect(envp, add_env, env);
    json_object_set_new(doc, "version", json_integer(AR_NT_JSON_VERSION));
    json_object_set_new(doc, "start_time", json_string(now));
    json_object_set_new(doc, "args", args);
    json_object_set_new(doc, "env", env);
    json_object_set_new(doc, "nccl_version", json_integer(c->nccl_library));
    json_t *cfg = json_pack("{s:i, s:i, s:I, s:I}", "nthreads", 1, "ngpus", 1, "minimum_bytes",
                            (json_int_t)c->min_bytes, "maximum_bytes", (json_int_t)c->max_bytes);
    if (c->step_factor > 1)
        json_object_set_new(cfg, "step_factor", json_integer((json_int_t)c->step_factor));
    else
        json_object_set_new(cfg, "step_bytes", json_integer((json_int_t)c->step_bytes));
    json_object_set_new(cfg, "warmup_iters", json_integer(c->warmup));
    json_object_set_new(cfg, "iterations", json_integer(c->iters));
    json_object_set_new(cfg, "aggregated_iterations", json_integer(c->agg_iters));
    json_object_set_new(cfg, "validation", json_integer(c->check));
    json_object_set_new(cfg, "graph", json_integer(c->graph));
    json_object_set_new(cfg, "blocking_collectives", json_boolean(c->blocking != 0));
    json_object_set_new(cfg, "per_iter_timing", json_boolean(c->per_iter));
    json_object_set_new(cfg, "per_iter_skip", json_integer(c->per_iter_skip));
    json_object_set_new(cfg, "parallel_init", json_boolean(c->parallel_init));
    json_object_set_new(cfg, "devices", json_array()); /* ar_nt_json_devices, once gathered */
    json_object_set_new(doc, "config", cfg);
    json_object_set_new(doc, "results", json_array());
    return doc;
}

static json_t *iter_json(const ar_nt_iter *it)
{
    json_t *o = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "skipped_iterations", it->skipped,
                          "min_us", it->min * 1e6, "max_us", it->max * 1e6, "avg_us", it->avg * 1e6, "p50_us",
                          it->p50 * 1e6, "p95_us", it->p95 * 1e6, "p99_us", it->p99 * 1e6, "stdev_us",
                          it->stdev * 1e6, "cv_pct", it->cv_pct);
    json_t *times = json_array();
    for (int i = 0; i < it->n; i++)
        json_array_append_new(times, json_real(it->times[i] * 1e6));
    json_object_set_new(o, "times_us", times);
    if (it->per_proc && it->nprocs > 1) {
        json_t *rows = json_array();
        for (int r = 0; r < it->nprocs; r++) {
            json_t *row = json_array();
            for (int i = 0; i < it->n; i++)
                json_array_append_new(row, json_real(it->per_proc[(size_t)r * it->n + i] * 1e6));
            json_array_append_new(rows, row);
        }
        json_object_set_new(o, "per_process_max_times_us", rows);
    }
    return o;
}

void ar_nt_json_result(json_t *doc, const ar_nt_config *c, const char *type, const char *op, int root,
                       const ar_line *l, const ar_nt_iter *it)
{
    static const char *const keys[AR_PLACEMENTS] = {"out_of_place", "in_place"};
    static const char *const iter_keys[AR_PLACEMENTS] = {"out_of_place_per_iter", "in_place_per_iter"};
    char root_s[32];
    snprintf(root_s, sizeof root_s, "%6i", root);
    json_t *r = json_pack("{s:I, s:I, s:s, s:s, s:s}", "size", (json_int_t)l->bytes, "count",
                          (json_int_t)l->count, "type", type, "redop", op, "root", root_s);
    for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
        const ar_agg *a = &l->agg[pl];
        json_t *p = json_object();
        json_object_set_new(p, c->cputime ? "cpu_time" : "time", json_real(a->time_s * 1e6));
        json_object_set_new(p, "alg_bw", json_real(l->algbw[pl]));
        json_object_set_new(p, "bus_bw", json_real(l->busbw[pl]));
        json_object_set_new(p, "nwrong", a->wrong >= 0 ? json_real((double)a->wrong) : json_null());
        json_object_set_new(r, keys[pl], p);
        if (it)
            json_object_set_new(r, iter_keys[pl], iter_json(&it[pl]));
    }
    json_object_set_new(r, "actual_iterations", json_integer(c->iters));
    json_object_set_new(r, "experiment_name", json_string(""));
    json_array_append_new(json_object_get(doc, "results"), r);
}

void ar_nt_json_finish(json_t *doc, int out_of_bounds, double avg_busbw, double min_bw)
{
    char now[64];
    ar_nt_now(now, sizeof now);
    json_object_set_new(doc, "out_of_bounds",
                        json_pack("{s:i, s:b}", "count", out_of_bounds, "okay", out_of_bounds == 0));
    json_t *bw = json_pack("{s:f}", "bandwidth", avg_busbw);
    json_object_set_new(bw, "okay",
                        min_bw < 0 ? json_string("unchecked") : json_boolean(avg_busbw >= min_bw * 0.9));
    json_object_set_new(doc, "average_bus_bandwidth", bw);
    json_object_set_new(doc, "errors", json_array());
    json_object_set_new(doc, "end_time", json_string(now));
}

int ar_nt_json_reserve(const char *path, char *used, size_t usedlen, char *err, size_t errlen)
{
    int fd = -1;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* nccl-tests would write DIR.0 beside it */
        snprintf(err, errlen, "-J %s: is a directory, not a file", path);
        return -1;
    }
    snprintf(used, usedlen, "%s", path);
    for (int i = 0; fd < 0 && i < 10000; i++) {
        fd = open(used, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
        if (fd < 0)
            snprintf(used, usedlen, "%s.%d", path, i);
    }
    if (fd < 0) {
        snprintf(err, errlen, "-J %s: cannot create %s: %s", path, used, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

int ar_nt_json_write(const json_t *doc, const char *used, char *err, size_t errlen)
{
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    if (!text) {
        snprintf(err, errlen, "-J: cannot serialise the document");
        return -1;
    }
    int fd = open(used, O_WRONLY | O_TRUNC);
    if (fd < 0) {
        snprintf(err, errlen, "-J %s: %s", used, strerror(errno));
        free(text);
        return -1;
    }
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w <= 0) {
            snprintf(err, errlen, "-J %s: write failed: %s", used, strerror(errno));
            close(fd);
            free(text);
            return -1;
        }
        off += (size_t)w;
    }
    free(text);
    if (close(fd) != 0) {
        snprintf(err, errlen, "-J %s: %s", used, strerror(errno));
        return -1;
    }
    return 0;
}
