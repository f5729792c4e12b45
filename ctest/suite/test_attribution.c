/* Which node a dead step is blamed on, from the lines the fatal path, mpirun and srun print. */
#include "../ga_test.h"
#include "attribution.h"
#include "step_status.h"

static suite_attribution pick_for(const char *status, const char *const *lines)
{
    suite_attr_scan s;
    memset(&s, 0, sizeof s);
    for (const char *const *l = lines; *l; l++)
        suite_attr_scan_line(&s, *l);
    suite_attribution a;
    suite_attr_pick(&s, status, &a);
    return a;
}

static suite_attribution pick(const char *const *lines)
{
    return pick_for("crashed", lines);
}

int main(void)
{
    /* mpirun names the rank and node of a rank killed by a signal. */
    const char *segv[] = {"Primary job  terminated normally, but 1 process returned",
                          "mpirun noticed that process rank 3 with PID 0 on node gpu-017 exited on signal 11 "
                          "(Segmentation fault).",
                          NULL};
    suite_attribution a = pick(segv);
    CHECK(a.found && a.rank == 3);
    CHECK_STR(a.host, "gpu-017");
    CHECK_STR(a.source, "mpirun");

    /* srun: one task, and a range of tasks (the first is named). */
    const char *srun1[] = {"srun: error: node-b: task 1: Exited with exit code 3", NULL};
    a = pick(srun1);
    CHECK(a.found && a.rank == 1);
    CHECK_STR(a.host, "node-b");
    CHECK_STR(a.source, "srun");
    const char *srun2[] = {"srun: error: node-c: tasks 4-7: Killed", "srun: error: node-d: task 9: Killed",
                           NULL};
    a = pick(srun2);
    CHECK(a.found && a.rank == 4);
    CHECK_STR(a.host, "node-c");

    /* The fatal path names the rank that gave up first; the launcher's later line does not replace it. */
    const char *fatal[] = {"[FATAL] gpu-042 rank 17 (ga_deadline.c:63): watchdog: stuck in NCCL init",
                           "mpirun noticed that process rank 0 with PID 0 on node gpu-001 exited on signal 9 "
                           "(Killed).",
                           "[FATAL] gpu-043 rank 18 (ga_deadline.c:63): watchdog", NULL};
    a = pick(fatal);
    CHECK(a.found && a.rank == 17);
    CHECK_STR(a.host, "gpu-042");
    CHECK_STR(a.source, "fatal");

    /* A rank's own failing exit code at a normal end: mpirun's notice of it names no host, the program's line
     * does; the fatal path still wins over it. */
    const char *exited[] = {
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "[EXIT] node-7 rank 5 code 3 (environment_error)",
        "mpirun noticed that process rank 0 with PID 0 on node gpu-001 exited on signal 9 "
        "(Killed).",
        NULL};
    a = pick(exited);
    CHECK(a.found && a.rank == 5);
    CHECK_STR(a.host, "node-7");
    CHECK_STR(a.source, "exit");
    const char *both[] = {"[EXIT] node-7 rank 5 code 3 (environment_error)",
                          "[FATAL] node-2 rank 1 (mb_host.c:88): out of memory", NULL};
    a = pick(both);
    CHECK(a.found && a.rank == 1);
    CHECK_STR(a.source, "fatal");

    /* A fatal line from before the identity was known ("?") names no node; nor do look-alike lines. */
    const char *none[] = {"[FATAL] ? rank -1 (ga_runtime.c:45): MPI_Init_thread failed",
                          "[FATAL] MPI_Init_thread failed",
                          "srun: error: Unable to allocate resources: Invalid partition",
                          "mpirun noticed that the job aborted, but has no info as to the process",
                          "[ENV] node 0 vm: 2 ranks",
                          "[EXIT] ? rank -1 code 3 (environment_error)",
                          "[EXIT] node-7 rank five code 3",
                          NULL};
    a = pick(none);
    CHECK(!a.found);

    /* No blame without evidence: a timeout that every rank reached at the same wait names no node, although
     * mpirun then notices rank 0's end; and after a timeout mpirun's notices (of the kill) name no node
     * either, only the watchdog's line for a rank that was behind does. */
    const char *job[] = {
        "[FATAL] job (ga_deadline.c:231): timeout: --timeout 4 s expired during 'allreduce': no "
        "rank behind the others: all 2 at wait 57 (reported by rank 0 on vm)",
        "mpirun noticed that process rank 0 with PID 0 on node vm exited on signal 9 (Killed).", NULL};
    a = pick_for("timeout", job);
    CHECK(!a.host[0]);
    CHECK_STR(a.source, "job");
    json_t *jj = suite_attr_to_json(&a);
    CHECK(json_is_null(json_object_get(jj, "host")) && json_is_null(json_object_get(jj, "rank")));
    CHECK_STR(json_string_value(json_object_get(jj, "source")), "job");
    json_decref(jj);
    const char *killed[] = {"mpirun noticed that process rank 0 with PID 0 on node vm exited on signal 15 "
                            "(Terminated).",
                            NULL};
    a = pick_for("timeout", killed);
    CHECK(!a.found);
    a = pick_for("crashed", killed);
    CHECK(a.found && a.rank == 0);
    const char *behind[] = {
        "[FATAL] node02 rank 1 (ga_deadline.c:220): timeout: x: behind the others: rank 1",
        "mpirun noticed that process rank 0 with PID 0 on node node01 exited on signal 9", NULL};
    a = pick_for("timeout", behind);
    CHECK(a.found && a.rank == 1);
    CHECK_STR(a.host, "node02");

    /* The step statuses that need a node named: an interrupted step neither died nor hung. */
    CHECK(suite_attr_wanted("crashed") && suite_attr_wanted("timeout") && suite_attr_wanted("env_error"));
    CHECK(!suite_attr_wanted("pass") && !suite_attr_wanted("fail") && !suite_attr_wanted("skipped") &&
          !suite_attr_wanted("missing") && !suite_attr_wanted("interrupted"));

    /* The finding gets the host and rank, or says "node unknown". */
    json_t *step = json_pack("{s:{s:s, s:i, s:s, s:s}}", "node", "host", "gpu-017", "rank", 3, "source",
                             "mpirun", "evidence", "x");
    json_t *f = json_pack("{s:s, s:n, s:n}", "message", "gemm_flops crashed", "host", "rank");
    suite_step_fault_name_node(f, step);
    CHECK_STR(json_string_value(json_object_get(f, "host")), "gpu-017");
    CHECK(json_integer_value(json_object_get(f, "rank")) == 3);
    CHECK_STR(json_string_value(json_object_get(f, "message")),
              "gemm_flops crashed; on host gpu-017 (rank 3)");
    json_decref(step);
    json_decref(f);
    step = json_pack("{s:{s:n, s:n, s:n, s:n}}", "node", "host", "rank", "source", "evidence");
    f = json_pack("{s:s, s:n}", "message", "mem_bw timed out", "host");
    suite_step_fault_name_node(f, step);
    CHECK(json_is_null(json_object_get(f, "host")));
    CHECK_STR(json_string_value(json_object_get(f, "message")), "mem_bw timed out; node unknown");
    json_decref(step);
    json_decref(f);
    step = json_pack("{s:{s:n, s:n, s:s, s:s}}", "node", "host", "rank", "source", "job", "evidence",
                     "[FATAL] job (x): no rank behind");
    f = json_pack("{s:s, s:n}", "message", "allreduce_bw timed out", "host");
    suite_step_fault_name_node(f, step);
    CHECK(json_is_null(json_object_get(f, "host")));
    CHECK(
        strstr(json_string_value(json_object_get(f, "message")), "no node: every rank was at the same wait"));
    json_decref(f);
    return ga_test_finish();
}
