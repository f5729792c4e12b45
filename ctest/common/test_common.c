/* Unit tests of the common library's pure parts: value parsing, the command line, launcher detection, GPU
 * index choice, environment allow-list and redaction, findings, and the atomic report write. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ga_cli.h"
#include "ga_envvars.h"
#include "ga_exit.h"
#include "ga_findings.h"
#include "ga_str.h"
#include "ga_gpu.h"
#include "ga_parse.h"
#include "ga_report.h"
#include "ga_runtime.h"
#include "ga_test.h"

static void test_parse_size(void)
{
    char err[128];
    uint64_t v = 0;
    CHECK(ga_parse_size("8", &v, err, sizeof err) == 0 && v == 8);
    CHECK(ga_parse_size("1K", &v, err, sizeof err) == 0 && v == 1024);
    CHECK(ga_parse_size("128M", &v, err, sizeof err) == 0 && v == 128ull << 20);
    CHECK(ga_parse_size("8g", &v, err, sizeof err) == 0 && v == 8ull << 30);
    CHECK(ga_parse_size("1T", &v, err, sizeof err) == 0 &&
          v == 1ull << 40);                                       /* mem_bw -s goes to 1T (issue 18) */
    CHECK(ga_parse_size("16777216T", &v, err, sizeof err) == -1); /* 2^64: does not fit */
    const char *bad[] = {"", "K", "-1", "1KB", "1.5M", "12x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(ga_parse_size(bad[i], &v, err, sizeof err) == -1);
    CHECK(strstr(err, "not a size") != NULL);
}

static void test_parse_numbers(void)
{
    char err[128];
    long l = 0;
    double d = 0;
    CHECK(ga_parse_long("42", 0, 100, &l, err, sizeof err) == 0 && l == 42);
    CHECK(ga_parse_long("101", 0, 100, &l, err, sizeof err) == -1 && strstr(err, "out of range"));
    CHECK(ga_parse_long("4x", 0, 100, &l, err, sizeof err) == -1);
    CHECK(ga_parse_double("0.5", 0, 1, &d, err, sizeof err) == 0 && d == 0.5);
    CHECK(ga_parse_double("nan", 0, 1, &d, err, sizeof err) == -1);
    CHECK(ga_parse_double("", 0, 1, &d, err, sizeof err) == -1);
    char list[] = "fp32,bf16,int8";
    char *items[4];
    CHECK(ga_split_list(list, items, 4) == 3);
    CHECK_STR(items[1], "bf16");
    char list2[] = "a,b,c";
    CHECK(ga_split_list(list2, items, 2) == -1);
}

typedef struct {
    long size;
    bool flag;
} demo_opts;

static int demo_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    demo_opts *o = opts;
    if (key == 'b')
        return ga_parse_long(arg, 1, 1000, &o->size, err, errlen);
    if (key == 300)
        o->flag = true;
    return 0;
}

static const ga_option demo_options[] = {
    {"minbytes", 'b', true, "BYTES", "smallest size"},
    {"flag", 300, false, NULL, "a long-only flag"},
};
static const ga_alias demo_aliases[] = {{"min-bytes", "minbytes"}};
static const ga_program_spec demo_spec = {.name = "demo",
                                          .summary = "A demo program.",
                                          .options = demo_options,
                                          .n_options = 2,
                                          .on_option = demo_on_option,
                                          .default_timeout_s = 60,
                                          .aliases = demo_aliases,
                                          .n_aliases = 1};

static ga_cli_result parse(demo_opts *o, ga_common_opts *c, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    return ga_cli_parse(&demo_spec, argc, argv, c, o, false);
}

static void test_cli(void)
{
    demo_opts o;
    ga_common_opts c;
    char *ok[] = {"demo", "-b", "64", "--flag", "--quick", "--report-dir", "/tmp/x", "--timeout", "30", NULL};
    CHECK(parse(&o, &c, 9, ok) == GA_CLI_RUN);
    CHECK(o.size == 64 && o.flag && c.quick && !c.verbose && c.timeout_s == 30);
    CHECK_STR(c.report_dir, "/tmp/x");

    char *defaults[] = {"demo", NULL};
    CHECK(parse(&o, &c, 1, defaults) == GA_CLI_RUN);
    CHECK_STR(c.report_dir, ".");
    CHECK(c.timeout_s == 60);

    char *unknown[] = {"demo", "--nope", NULL};
    CHECK(parse(&o, &c, 2, unknown) == GA_CLI_ERROR);
    char *bad_value[] = {"demo", "-b", "0", NULL};
    CHECK(parse(&o, &c, 3, bad_value) == GA_CLI_ERROR);
    char *missing[] = {"demo", "--minbytes", NULL};
    CHECK(parse(&o, &c, 2, missing) == GA_CLI_ERROR);
    char *bad_timeout[] = {"demo", "--timeout", "soon", NULL};
    CHECK(parse(&o, &c, 3, bad_timeout) == GA_CLI_ERROR);
    char *positional[] = {"demo", "extra", NULL};
    CHECK(parse(&o, &c, 2, positional) == GA_CLI_ERROR);
    char *help[] = {"demo", "--help", NULL};
    CHECK(parse(&o, &c, 2, help) == GA_CLI_EXIT);
    char *version[] = {"demo", "--version", NULL};
    CHECK(parse(&o, &c, 2, version) == GA_CLI_EXIT);

    /* A deprecated alias acts as its option, value checks included. */
    char *alias[] = {"demo", "--min-bytes", "128", NULL};
    CHECK(parse(&o, &c, 3, alias) == GA_CLI_RUN && o.size == 128);
    char *alias_bad[] = {"demo", "--min-bytes", "0", NULL};
    CHECK(parse(&o, &c, 3, alias_bad) == GA_CLI_ERROR);

    /* One name, one meaning: a program option may not take a common option's name or key. */
    static const ga_option clashing[] = {{"timeout", 'T', true, "SEC", "per-wait bound"}};
    ga_program_spec bad_spec = demo_spec;
    bad_spec.options = clashing;
    bad_spec.n_options = 1;
    char *plain[] = {"demo", NULL};
    memset(&o, 0, sizeof o);
    CHECK(ga_cli_parse(&bad_spec, 1, plain, &c, &o, false) == GA_CLI_ERROR);
}

/* Relative thresholds are percentages; a fraction written for one is refused, not read as a tiny percent. */
static void test_parse_pct(void)
{
    char err[160];
    double v = -1;
    CHECK(ga_cli_parse_pct("10", 0, 100, &v, err, sizeof err) == 0 && v == 10);
    CHECK(ga_cli_parse_pct("10%", 0, 100, &v, err, sizeof err) == 0 && v == 10);
    CHECK(ga_cli_parse_pct("0", 0, 100, &v, err, sizeof err) == 0 && v == 0);
    CHECK(ga_cli_parse_pct("1", 0, 100, &v, err, sizeof err) == 0 && v == 1);
    CHECK(ga_cli_parse_pct("0.5%", 0, 100, &v, err, sizeof err) == 0 && v == 0.5);
    CHECK(ga_cli_parse_pct("0.1", 0, 100, &v, err, sizeof err) == -1 && strstr(err, "write 10 for 10%"));
    CHECK(ga_cli_parse_pct("-0.3", -1000, 100, &v, err, sizeof err) == -1 && strstr(err, "not a fraction"));
    CHECK(ga_cli_parse_pct("-30", -1000, 100, &v, err, sizeof err) == 0 && v == -30);
    CHECK(ga_cli_parse_pct("101", 0, 100, &v, err, sizeof err) == -1 && strstr(err, "out of range"));
    CHECK(ga_cli_parse_pct("%", 0, 100, &v, err, sizeof err) == -1);
    CHECK(ga_cli_parse_pct("10%%", 0, 100, &v, err, sizeof err) == -1);
    CHECK(ga_cli_parse_pct("ten", 0, 100, &v, err, sizeof err) == -1);
    CHECK(ga_cli_parse_pct("", 0, 100, &v, err, sizeof err) == -1);
}

/* A fixture environment for launcher detection: NAME=VALUE pairs. */
static const char *const *fixture_env;
static const char *fixture_getenv(const char *name)
{
    size_t len = strlen(name);
    for (const char *const *e = fixture_env; e && *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

static void test_launcher(void)
{
    ga_launcher l;
    const char *mpirun[] = {"OMPI_COMM_WORLD_SIZE=4", "PMIX_RANK=0", "SLURM_JOB_ID=7", NULL};
    fixture_env = mpirun;
    ga_launcher_detect(fixture_getenv, &l);
    CHECK(l.kind == GA_LAUNCHER_MPIRUN);
    CHECK(ga_launcher_expected_tasks(fixture_getenv) == 4);

    const char *mpijob[] = {"OMPI_COMM_WORLD_SIZE=16", "OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile",
                            NULL};
    fixture_env = mpijob;
    ga_launcher_detect(fixture_getenv, &l);
    CHECK(l.kind == GA_LAUNCHER_MPIJOB);

    const char *srun[] = {"SLURM_JOB_ID=42",
                          "SLURM_STEP_ID=0",
                          "SLURM_PROCID=3",
                          "SLURM_STEP_NUM_TASKS=8",
                          "SLURM_MPI_TYPE=pmix",
                          "PMIX_RANK=3",
                          NULL};
    fixture_env = srun;
    ga_launcher_detect(fixture_getenv, &l);
    CHECK(l.kind == GA_LAUNCHER_SRUN);
    CHECK(strstr(l.detail, "--mpi=pmix") != NULL);
    CHECK(ga_launcher_expected_tasks(fixture_getenv) == 8);

    /* an sbatch script's own environment (no srun step): no task count to enforce */
    const char *batch[] = {"SLURM_JOB_ID=42", "SLURM_NTASKS=8", NULL};
    fixture_env = batch;
    ga_launcher_detect(fixture_getenv, &l);
    CHECK(l.kind == GA_LAUNCHER_SINGLETON);
    CHECK(ga_launcher_expected_tasks(fixture_getenv) == 0);
}

/* The machine's name (issue 41, item 1): Kubernetes' node name from GA_NODE_NAME with the pod's host name
 * beside it; the host name alone where the variable is unset, empty, not a plain name, or the host's own. */
static void test_machine_name(void)
{
    char m[GA_HOST_MAX], pod[GA_HOST_MAX];
    const char *k8s[] = {"GA_NODE_NAME=gpu-node-17", NULL};
    fixture_env = k8s;
    ga_machine_name(fixture_getenv, "gpuaccept-worker-2", m, sizeof m, pod, sizeof pod);
    CHECK(strcmp(m, "gpu-node-17") == 0 && strcmp(pod, "gpuaccept-worker-2") == 0);
    ga_machine_name(fixture_getenv, "gpu-node-17", m, sizeof m, pod, sizeof pod); /* hostNetwork: one name */
    CHECK(strcmp(m, "gpu-node-17") == 0 && pod[0] == '\0');
    const char *bad[] = {"GA_NODE_NAME=-rf /", NULL}, *empty[] = {"GA_NODE_NAME=", NULL}, *none[] = {NULL};
    const char *const *envs[] = {bad, empty, none};
    for (int i = 0; i < 3; i++) {
        fixture_env = envs[i];
        ga_machine_name(fixture_getenv, "node4", m, sizeof m, pod, sizeof pod);
        CHECK(strcmp(m, "node4") == 0 && pod[0] == '\0');
    }
}

static void test_gpu_pick(void)
{
    char err[256];
    CHECK(ga_gpu_pick_index(3, 8, 8, err, sizeof err) == 3);
    CHECK(ga_gpu_pick_index(5, 8, 1, err, sizeof err) == 0); /* bound by the launcher */
    CHECK(ga_gpu_pick_index(0, 4, 8, err, sizeof err) == 0);
    CHECK(ga_gpu_pick_index(6, 8, 4, err, sizeof err) == -1 && strstr(err, "8 ranks on this node"));
    CHECK(ga_gpu_pick_index(0, 1, 0, err, sizeof err) == -1);
}

/* The node-wide index is claimed only where the ordinal is it (issue 40, finding 4): every GPU visible, in
 * PCI bus order. A rank bound to one GPU (Slurm, a container) sees it as device 0 wherever it sits. */
static void test_gpu_node_index(void)
{
    CHECK(ga_gpu_node_index(5, 8, NULL, NULL, "PCI_BUS_ID") == 5);
    CHECK(ga_gpu_node_index(5, 8, NULL, "all", "PCI_BUS_ID") == 5);
    CHECK(ga_gpu_node_index(5, 8, NULL, NULL, "FASTEST_FIRST") ==
          -1);                                                      /* the user's order: not nvidia-smi's */
    CHECK(ga_gpu_node_index(0, 1, NULL, NULL, "PCI_BUS_ID") == -1); /* bound by a cgroup */
    CHECK(ga_gpu_node_index(0, 1, "5", NULL, "PCI_BUS_ID") == -1);  /* CUDA_VISIBLE_DEVICES per rank */
    CHECK(ga_gpu_node_index(1, 2, "4,5", NULL, "PCI_BUS_ID") == -1);
    CHECK(ga_gpu_node_index(0, 2, NULL, "GPU-a,GPU-b", "PCI_BUS_ID") == -1); /* a device plugin's choice */
    CHECK(ga_gpu_node_index(-1, 8, NULL, NULL, "PCI_BUS_ID") == -1);
}

typedef struct {
    char text[2048];
    int count;
} collected;

static void collect(const char *name, const char *value, void *user)
{
    collected *c = user;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s=%s;", name, value);
    c->count++;
}

static void test_envvars(void)
{
    CHECK(ga_envvar_allowed("NCCL_IB_HCA"));
    CHECK(ga_envvar_allowed("CUDA_VISIBLE_DEVICES"));
    CHECK(ga_envvar_allowed("OMPI_MCA_btl_tcp_if_include"));
    CHECK(!ga_envvar_allowed("HOME"));
    CHECK(!ga_envvar_allowed("AWS_SECRET_ACCESS_KEY"));
    CHECK(!ga_envvar_allowed("OMPI_MCA_orte_hnp_uri"));
    CHECK(ga_envvar_is_secret("NCCL_NET_PLUGIN_TOKEN"));
    CHECK(ga_envvar_is_secret("UCX_auth_key"));
    CHECK(!ga_envvar_is_secret("NCCL_IB_PKEY")); /* a partition key is configuration, not a credential */
    CHECK(!ga_envvar_is_secret("NCCL_SOCKET_IFNAME"));
    /* issue 18: compound names, the word anywhere in a part */
    const char *compound[] = {
        "NCCL_AUTHTOKEN", "NVIDIA_SECRETKEY", "NVIDIA_ACCESSTOKEN",         "UCX_PASSWORD2",
        "CUDA_TOKENS",    "UCX_KEYS",         "OMPI_MCA_btl_tcp_passphrase"};
    for (size_t i = 0; i < sizeof compound / sizeof *compound; i++)
        CHECK(ga_envvar_is_secret(compound[i]));
    CHECK(!ga_envvar_is_secret("NCCL_IB_GID_INDEX") && !ga_envvar_is_secret("UCX_TLS") &&
          !ga_envvar_is_secret("NCCL_P2P_LEVEL"));
    CHECK(ga_envvar_value_is_secret("AKIAIOSFODNN7EXAMPLE"));
    CHECK(ga_envvar_value_is_secret("x,sk-live-4eC39HqLyjWDarjtT1zdp7dc"));
    CHECK(ga_envvar_value_is_secret("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    CHECK(!ga_envvar_value_is_secret("mlx5_0:1,mlx5_1:1") && !ga_envvar_value_is_secret("/usr/lib/AKIA"));
    char red[256];
    ga_envvar_redact_value("/opt/lib:https://alice:hunter2@mirror.example.com/cuda/lib:/usr/lib", red,
                           sizeof red);
    CHECK(strstr(red, "hunter2") == NULL && strstr(red, "alice") == NULL &&
          strcmp(red, "/opt/lib:https://" GA_REDACTED "@mirror.example.com/cuda/lib:/usr/lib") == 0);
    ga_envvar_redact_value("http://mirror.example.com/a@b", red, sizeof red);
    CHECK(strcmp(red, "http://mirror.example.com/a@b") == 0); /* an @ in the path is no credential */

    char *envp[] = {"PATH=/usr/bin",
                    "NCCL_SOCKET_IFNAME=eth0",
                    "CUDA_VISIBLE_DEVICES=0,1",
                    "NCCL_NET_PLUGIN_TOKEN=hunter2",
                    "OMPI_MCA_orte_precondition_transports=abc-def",
                    NULL};
    collected c = {"", 0};
    ga_envvars_collect(envp, collect, &c);
    CHECK(c.count == 3);
    CHECK_STR(c.text, "CUDA_VISIBLE_DEVICES=0,1;NCCL_NET_PLUGIN_TOKEN=<redacted>;NCCL_SOCKET_IFNAME=eth0;");
    CHECK(strstr(c.text, "hunter2") == NULL);
}

static void test_findings(void)
{
    ga_findings f;
    ga_findings_init(&f);
    CHECK(ga_findings_exit_code(&f) == GA_EXIT_PASS);
    ga_findings_add(&f, GA_SEV_WARN, "X_WARN", GA_WHERE_CLUSTER, "just a warning");
    CHECK(ga_findings_exit_code(&f) == GA_EXIT_PASS);
    for (int i = 0; i < 40; i++) /* past the initial capacity */
        ga_findings_add(&f, GA_SEV_FAIL, "X_FAIL", (ga_where){"node7", 7, 56 + i, i % 8, NULL}, "slow %d", i);
    CHECK(ga_findings_exit_code(&f) == GA_EXIT_CHECK_FAILED);
    CHECK(ga_findings_count(&f, GA_SEV_FAIL) == 40);
    CHECK(ga_findings_has_code(&f, "X_WARN") && !ga_findings_has_code(&f, "X_NONE"));
    json_t *j = ga_findings_to_json(&f);
    CHECK(json_array_size(j) == 41);
    CHECK(json_is_null(json_object_get(json_array_get(j, 0), "host")));
    CHECK_STR(json_string_value(json_object_get(json_array_get(j, 3), "host")), "node7");
    CHECK(json_integer_value(json_object_get(json_array_get(j, 3), "gpu")) == 2);
    json_decref(j);
    ga_findings_free(&f);
}

/* What ga_result_print printed, without its newline. */
static void printed_result(const ga_findings *f, int exit_code, const char *why, char *line, size_t len)
{
    fflush(stdout);
    int saved = dup(1);
    FILE *tmp = tmpfile();
    CHECK(saved >= 0 && tmp != NULL);
    dup2(fileno(tmp), 1);
    ga_result_print(f, exit_code, why);
    dup2(saved, 1);
    close(saved);
    rewind(tmp);
    if (!fgets(line, (int)len, tmp))
        line[0] = '\0';
    line[strcspn(line, "\n")] = '\0';
    fclose(tmp);
}

/* The FAILURE line is never cut mid-word and says how many reasons it left out (issue 41, observation 10:
 * 650 characters cut mid-word by the front-end's 512-byte line). */
static void test_result_line(void)
{
    ga_findings f;
    ga_findings_init(&f);
    for (int i = 0; i < 7; i++)
        ga_findings_add(&f, GA_SEV_FAIL, "NH_XID", (ga_where){"node7", 7, i, i, NULL},
                        "GPU %d logged Xid 79 (fallen off the bus): the kernel log says the GPU is no longer "
                        "reachable over PCIe; drain the node and reseat or replace the GPU %d",
                        i, i);
    char line[1024];
    printed_result(&f, GA_EXIT_CHECK_FAILED, NULL, line, sizeof line);
    printf("result line (%zu bytes): %s\n", strlen(line), line);
    CHECK(strlen(line) < 511); /* what the front-end keeps of a line */
    CHECK(strstr(line, "; and 5 more reasons (see the report)") != NULL);
    const char *dots = strstr(line, "\xe2\x80\xa6");
    CHECK(dots == NULL || dots[-1] != ' '); /* cut after a word */
    CHECK(dots == NULL || strchr("abcdefghijklmnopqrstuvwxyz0123456789)", dots[-1]) != NULL);
    /* a short single reason stays whole and alone */
    ga_findings g;
    ga_findings_init(&g);
    ga_findings_add(&g, GA_SEV_FAIL, "X_FAIL", GA_WHERE_CLUSTER, "short");
    printed_result(&g, GA_EXIT_CHECK_FAILED, NULL, line, sizeof line);
    CHECK_STR(line, "[RESULT] FAILURE: X_FAIL: short");
    printed_result(&g, GA_EXIT_ENV, "no GPU", line, sizeof line);
    CHECK_STR(line, "[RESULT] FAILURE: no GPU; X_FAIL: short");
    CHECK(ga_str_word_prefix("alpha beta gamma", 12) == 10);
    CHECK(ga_str_word_prefix("alpha beta", 40) == 10);
    CHECK(ga_str_word_prefix("alpha; beta", 8) == 5);
    ga_findings_free(&g);
    ga_findings_free(&f);
}

static void test_report_write(void)
{
    char dir[] = "/tmp/ga_test_report.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char err[512];
    char nested[256];
    snprintf(nested, sizeof nested, "%s/a/b", dir);
    CHECK(ga_report_dir_prepare(nested, err, sizeof err) == 0);

    json_t *r = json_pack("{s:s, s:i}", "program", "demo", "world_size", 4);
    ga_report_add_metric(r, "busbw_at_max", 123.5, "GB/s", true, GA_WHERE_CLUSTER);
    CHECK(ga_report_write_atomic(nested, "demo", r, err, sizeof err) == 0);
    char path[300];
    snprintf(path, sizeof path, "%s/demo.json", nested);
    json_error_t jerr;
    json_t *back = json_load_file(path, 0, &jerr);
    CHECK(back && json_integer_value(json_object_get(back, "world_size")) == 4);
    CHECK(json_real_value(json_object_get(json_array_get(json_object_get(back, "metrics"), 0), "value")) ==
          123.5);
    json_decref(back);
    json_decref(r);

    /* a path below a regular file can never be a directory, even for root */
    char below_file[320];
    snprintf(below_file, sizeof below_file, "%s/sub", path);
    CHECK(ga_report_dir_prepare(below_file, err, sizeof err) == -1);
    CHECK(strstr(err, "--report-dir") != NULL);
    CHECK(ga_report_write_atomic(below_file, "demo", json_object(), err, sizeof err) == -1);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", nested, dir);
    CHECK(system(cmd) == 0); /* only demo.json: no temporary file left behind */
}

int main(void)
{
    test_parse_size();
    test_parse_numbers();
    test_cli();
    test_parse_pct();
    test_launcher();
    test_machine_name();
    test_gpu_pick();
    test_gpu_node_index();
    test_envvars();
    test_findings();
    test_result_line();
    test_report_write();
    return ga_test_finish();
}
