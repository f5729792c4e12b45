/* Unit tests of the core's own helpers, linked with the core alone (no MPI, CUDA or hwloc: the layering test
 * checks this binary too): the median, string equality, UTC stamps, exit code names, and a report built from
 * a job described by hand, as a tool without MPI would. */
#include <ctype.h>
#include <stdlib.h>

#include "ga_cli.h"
#include "ga_exit.h"
#include "ga_job.h"
#include "ga_nccl_log.h"
#include "ga_pci.h"
#include "ga_report.h"
#include "ga_stats.h"
#include "ga_str.h"
#include "ga_test.h"
#include "ga_time.h"

static void test_median(void)
{
    double even[] = {5, 1, 3, 2};
    CHECKF(ga_median(even, 4) == 2.5, "median of 5 1 3 2: %g", ga_median(even, 4));
    /* sorted in place: callers read the best sample from v[0] */
    CHECK(even[0] == 1 && even[1] == 2 && even[2] == 3 && even[3] == 5);
    double odd[] = {5, 1, 3};
    CHECK(ga_median(odd, 3) == 3);
    double one[] = {7.5};
    CHECK(ga_median(one, 1) == 7.5);
    CHECK(ga_median(NULL, 0) == 0);
    double neg[] = {-1, -3, 10, 0};
    CHECK(ga_median(neg, 4) == -0.5);
}

static void test_streq(void)
{
    CHECK(ga_streq("pass", "pass"));
    CHECK(!ga_streq("pass", "fail"));
    CHECK(!ga_streq("pass", "passed"));
    CHECK(!ga_streq(NULL, "pass"));
    CHECK(!ga_streq("pass", NULL));
    CHECK(!ga_streq(NULL, NULL)); /* a field missing on both sides is no match */
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

static void test_utc(void)
{
    char ts[32];
    ga_utc_timestamp(ts, sizeof ts);
    /* 2026-11-23T12:00:00Z */
    CHECKF(strlen(ts) == 20 && ts[4] == '-' && ts[7] == '-' && ts[10] == 'T' && ts[13] == ':' &&
               ts[16] == ':' && ts[19] == 'Z' && all_digits(ts, 4) && all_digits(ts + 11, 2),
           "timestamp '%s'", ts);
    char dir[64];
    ga_utc_format(dir, sizeof dir, "gpuaccept-%Y%m%d-%H%M%SZ");
    CHECKF(strlen(dir) == 26 && strncmp(dir, "gpuaccept-", 10) == 0 && all_digits(dir + 10, 8) &&
               dir[18] == '-' && dir[25] == 'Z',
           "directory name '%s'", dir);
    char tiny[4] = "xyz";
    ga_utc_format(tiny, sizeof tiny, "%Y-%m-%d");
    CHECK(tiny[0] == '\0'); /* too small: empty, never undefined */
    double t0 = ga_now(), t1 = ga_now();
    CHECK(t1 >= t0 && t0 > 0);
}

static void test_exit_names(void)
{
    CHECK_STR(ga_exit_code_name(GA_EXIT_PASS), "pass");
    CHECK_STR(ga_exit_code_name(GA_EXIT_CHECK_FAILED), "check_failed");
    CHECK_STR(ga_exit_code_name(GA_EXIT_USAGE), "usage_error");
    CHECK_STR(ga_exit_code_name(GA_EXIT_ENV), "environment_error");
    CHECK_STR(ga_exit_code_name(GA_EXIT_TIMEOUT), "timeout");
    CHECK_STR(ga_exit_code_name(GA_EXIT_INTERNAL), "internal_error");
    CHECK_STR(ga_exit_code_name(99), "internal_error");
}

static void test_report_from_job(void)
{
    char *argv[] = {"demo", "--quick", NULL};
    ga_job job = {.world_size = 16, .node_count = 2, .start_time = ga_now() - 1.0, .argc = 2, .argv = argv};
    job.launcher.kind = GA_LAUNCHER_SRUN;
    snprintf(job.launcher.detail, sizeof job.launcher.detail, "srun --mpi=pmix (SLURM_JOB_ID=7)");
    ga_common_opts common = {.report_dir = "/tmp/x", .quick = true, .timeout_s = 30};
    json_t *r = ga_report_new(&job, "demo", &common);
    CHECK_STR(json_string_value(json_object_get(r, "schema")), "gpuaccept-report");
    CHECK_STR(json_string_value(json_object_get(r, "program")), "demo");
    CHECK(json_integer_value(json_object_get(r, "world_size")) == 16);
    CHECK(json_integer_value(json_object_get(r, "node_count")) == 2);
    json_t *l = json_object_get(r, "launcher");
    CHECK_STR(json_string_value(json_object_get(l, "kind")), "srun");
    CHECK_STR(json_string_value(json_object_get(l, "detail")), "srun --mpi=pmix (SLURM_JOB_ID=7)");
    json_t *cmd = json_object_get(r, "command_line");
    CHECK(json_array_size(cmd) == 2 && ga_streq(json_string_value(json_array_get(cmd, 1)), "--quick"));
    double dur = json_real_value(json_object_get(r, "duration_s"));
    CHECKF(dur >= 1.0 && dur < 60, "duration %g s from a start one second ago", dur);
    CHECK(json_is_true(json_object_get(json_object_get(r, "options"), "quick")));
    json_decref(r);

    /* no command line known: an empty list, not a crash */
    ga_job bare = {.world_size = 1, .node_count = 1, .argc = 3, .argv = NULL};
    r = ga_report_new(&bare, "demo", &common);
    CHECK(json_array_size(json_object_get(r, "command_line")) == 0);
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "launcher"), "kind")), "singleton");
    json_decref(r);
}

static void test_record_header(void)
{
    ga_record_header h = {.world_rank = 3, .local_rank = 1, .device_index = -1, .status = GA_EXIT_ENV};
    snprintf(h.host, sizeof h.host, "node07");
    snprintf(h.message, sizeof h.message, "no GPU");
    json_t *o = ga_record_header_json(&h);
    CHECK(json_integer_value(json_object_get(o, "rank")) == 3);
    CHECK(json_is_null(json_object_get(o, "device")));
    CHECK_STR(json_string_value(json_object_get(o, "status")), "environment_error");
    CHECK_STR(json_string_value(json_object_get(o, "message")), "no GPU");
    json_decref(o);
}

/* Issue 40, finding 6: a wait on the GPU yields the CPU from its first poll (NCCL's proxy thread shares the
 * rank's CPUs), sleeps only once it has lasted GA_WAIT_YIELD_ONLY_S, and each sleep stays under 1 % of the
 * time already waited (a completion is seen at most one pause late). */
static void test_wait_pause(void)
{
    CHECK(ga_wait_pause_s(0) == 0 && ga_wait_pause_s(5e-6) == 0 && ga_wait_pause_s(9e-3) == 0);
    CHECK(ga_wait_pause_s(GA_WAIT_YIELD_ONLY_S) > 0);
    for (double w = GA_WAIT_YIELD_ONLY_S; w < 100; w *= 1.7) {
        double p = ga_wait_pause_s(w);
        CHECKF(p > 0 && p <= GA_WAIT_SLEEP_MAX_S && p <= 0.01 * w, "pause %g s after %g s", p, w);
    }
    CHECK(GA_WAIT_SLEEP_MAX_S <= 1e-3); /* never a sleep a person would see */
    CHECK(ga_wait_pause_s(-1) == 0);    /* a clock that stepped back: yield */
    double t0 = ga_now();
    for (int i = 0; i < 100; i++)
        ga_wait_pause(1.0); /* the longest pause, 100 times */
    double took = ga_now() - t0;
    CHECKF(took >= 100 * GA_WAIT_SLEEP_MAX_S * 0.9 && took < 2.0, "100 pauses took %g s", took);
}

/* Issue 40, finding 11: a library older in major.minor than the headers is refused; a newer one, or another
 * patch of the same minor, is not. Codes as nccl.h's NCCL_VERSION makes them (the scale changed at 2.9). */
static void test_nccl_versions(void)
{
    CHECK(ga_nccl_runtime_older(22703, 22809));
    CHECK(ga_nccl_runtime_older(2804, 22809)); /* 2.8.4, the old scale */
    CHECK(!ga_nccl_runtime_older(22809, 22809));
    CHECK(!ga_nccl_runtime_older(22801, 22809)); /* an older patch: the same ABI */
    CHECK(!ga_nccl_runtime_older(22901, 22809));
    CHECK(!ga_nccl_runtime_older(30000, 22809));
    CHECK(ga_nccl_runtime_older(22809, 30000));
    int major, minor, patch;
    ga_nccl_version_split(22809, &major, &minor, &patch);
    CHECK(major == 2 && minor == 28 && patch == 9);
    ga_nccl_version_split(2804, &major, &minor, &patch);
    CHECK(major == 2 && minor == 8 && patch == 4);
}

/* NVML's, CUDA's and sysfs's forms of one bus id are one id (issue 40, finding 4); what is not a bus id is
 * refused, never half-read. */
static void test_pci_normalise(void)
{
    const char *same[][2] = {{"00000000:1B:00.0", "0000:1b:00.0"}, /* nvmlPciInfo_t.busId */
                             {"0000:1B:00.0", "0000:1b:00.0"},     /* cudaDeviceGetPCIBusId */
                             {"0000:9a:00.0", "0000:9a:00.0"},     /* sysfs, lspci -D */
                             {"9A:00.0", "0000:9a:00.0"},          /* lspci without the domain */
                             {"00000001:C1:1F.7", "0001:c1:1f.7"}};
    char out[GA_PCI_BUS_ID_LEN];
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        CHECKF(ga_pci_normalise(same[i][0], out, sizeof out) == 0, "%s", same[i][0]);
        CHECK_STR(out, same[i][1]);
    }
    CHECK(ga_pci_same("00000000:1B:00.0", "0000:1b:00.0"));
    CHECK(!ga_pci_same("0000:1b:00.0", "0000:1c:00.0"));
    CHECK(!ga_pci_same("", ""));
    const char *bad[] = {"",
                         "GPU-1234",
                         "0000:1b:00",
                         "0000:1b:00.8",
                         "0000:1b:20.0",
                         "0000:100:00.0",
                         "000010000:1b:00.0",
                         "1:2:3:4.0",
                         "0000:1b:00.0x",
                         NULL};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(out, sizeof out, "junk");
        CHECKF(ga_pci_normalise(bad[i], out, sizeof out) == -1 && out[0] == '\0', "'%s' refused",
               bad[i] ? bad[i] : "(null)");
    }
    char small[8];
    CHECK(ga_pci_normalise("0000:1b:00.0", small, sizeof small) == -1 && small[0] == '\0');
}

/* -T read before MPI_Init (issue 45, item 8): each spelling, the last one given, an alias, and nothing for a
 * program without the option or for a word after "--". */
static void test_scan_wait_timeout(void)
{
    typedef struct {
        double t;
    } opts;
    static const ga_option rows[] = {GA_WAIT_TIMEOUT_OPTION(opts, t)};
    static const ga_alias aliases[] = {{"comm-timeout", "wait-timeout"}};
    ga_program_spec spec = {.name = "p", .options = rows, .n_options = 1, .aliases = aliases, .n_aliases = 1};
    ga_program_spec none = {.name = "q"};
    struct {
        const char *words[5];
        double want;
    } cases[] = {{{"p", "-T", "5"}, 5},
                 {{"p", "-T7"}, 7},
                 {{"p", "--wait-timeout=3", "--quick"}, 3},
                 {{"p", "-T", "5", "--wait-timeout", "9"}, 9},
                 {{"p", "--comm-timeout", "4"}, 4},
                 {{"p", "--", "-T", "5"}, 0},
                 {{"p", "-T", "x"}, 0},
                 {{"p", "--quick"}, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int argc = 0;
        while (argc < 5 && cases[i].words[argc])
            argc++;
        double got = ga_cli_scan_wait_timeout(&spec, argc, (char **)cases[i].words);
        CHECKF(got == cases[i].want, "case %zu: %g, want %g", i, got, cases[i].want);
    }
    char *words[] = {"q", "-T", "5", NULL};
    CHECK(ga_cli_scan_wait_timeout(&none, 3, words) == 0);
}

int main(void)
{
    test_scan_wait_timeout();
    test_wait_pause();
    test_nccl_versions();
    test_pci_normalise();
    test_median();
    test_streq();
    test_utc();
    test_exit_names();
    test_report_from_job();
    test_record_header();
    return ga_test_finish();
}
