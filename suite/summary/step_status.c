#include "step_status.h"

#include <stdio.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_str.h"
#include "ga_text.h"
#include "outputs.h"

/* How a step that did not end with a report of its checks becomes a finding. */
static const suite_step_fault step_faults[] = {
    {"crashed", "STEP_CRASHED", GA_EXIT_INTERNAL, "crashed"},
    {"timeout", "STEP_TIMEOUT", GA_EXIT_TIMEOUT, "timed out"},
    {"env_error", "STEP_ENV_ERROR", GA_EXIT_ENV, "could not measure: environment error"},
    {"usage_error", "STEP_USAGE_ERROR", GA_EXIT_USAGE, "rejected its command line"},
    {"internal_error", "STEP_INTERNAL_ERROR", GA_EXIT_INTERNAL, "failed with an internal error"},
    {"missing", "STEP_MISSING", GA_EXIT_ENV, "is not installed beside gpuaccept"},
    /* a step cut short by a stop request is no fault of a node, nor a timeout; the run's exit is 130 or 143
     */
    {"interrupted", "STEP_INTERRUPTED", GA_EXIT_ENV, "was interrupted (the run was stopped)"},
    {"fail", "STEP_FAILED", GA_EXIT_CHECK_FAILED, "failed without naming a fault"},
    {"bad_report", "STEP_BAD_REPORT", GA_EXIT_INTERNAL, "left no report that can be trusted"},
};

bool suite_step_status_known(const char *status)
{
    if (ga_streq(status, "pass") || ga_streq(status, "skipped") || ga_streq(status, "not_run"))
        return true;
    for (size_t i = 0; i < sizeof step_faults / sizeof step_faults[0]; i++)
        if (ga_streq(step_faults[i].status, status))
            return true;
    return false;
}

const suite_step_fault *suite_step_fault_of(const char *status)
{
    for (size_t i = 0; i < sizeof step_faults / sizeof step_faults[0]; i++)
        if (ga_streq(step_faults[i].status, status))
            return &step_faults[i];
    return NULL;
}

int suite_fault_exit_class(const char *code)
{
    if (strcmp(code, SUITE_HANDOFF_FAILED) == 0)
        return GA_EXIT_ENV;
    for (size_t i = 0; i < sizeof step_faults / sizeof step_faults[0]; i++)
        if (strcmp(step_faults[i].code, code) == 0)
            return step_faults[i].exit_class;
    return GA_EXIT_CHECK_FAILED;
}

const char *suite_step_status(const suite_step_end *res, bool program_found, bool have_report)
{
    if (!program_found)
        return "missing";
    if (res->interrupted)
        return "interrupted";
    if (res->timed_out)
        return "timeout";
    if (res->signal || res->exit_code < 0)
        return "crashed";
    switch (res->exit_code) {
    case GA_EXIT_PASS:
        return have_report ? "pass" : "crashed";
    case GA_EXIT_CHECK_FAILED:
        return have_report ? "fail" : "crashed";
    case GA_EXIT_USAGE:
        return "usage_error";
    case GA_EXIT_ENV:
        return "env_error";
    case GA_EXIT_TIMEOUT:
        return "timeout";
    case GA_EXIT_INTERNAL:
        return "internal_error";
    default:
        return "crashed";
    }
}

void suite_step_fault_name_node(json_t *finding, const json_t *run_step)
{
    const json_t *node = json_object_get(run_step, "node");
    if (!json_is_object(node))
        return; /* a record from before nodes were named, or a status that names none */
    const char *host = json_string_value(json_object_get(node, "host"));
    json_t *rank = json_object_get(node, "rank");
    const char *msg = json_string_value(json_object_get(finding, "message"));
    char buf[700];
    if (host && json_is_integer(rank))
        snprintf(buf, sizeof buf, "%s; on host %s (rank %lld)", msg ? msg : "", host,
                 (long long)json_integer_value(rank));
    else if (host)
        snprintf(buf, sizeof buf, "%s; on host %s", msg ? msg : "", host);
    else if (ga_streq(json_string_value(json_object_get(node, "source")), "job"))
        snprintf(buf, sizeof buf,
                 "%s; no node: every rank was at the same wait when the limit expired (the work needed more "
                 "time than the limit gave it: %s)",
                 msg ? msg : "", json_string_value(json_object_get(node, "evidence")));
    else
        snprintf(buf, sizeof buf, "%s; node unknown", msg ? msg : "");
    json_object_set_new(finding, "message", ga_json_text(buf));
    if (host) {
        json_object_set_new(finding, "host", ga_json_text(host));
        json_object_set(finding, "rank", json_is_integer(rank) ? rank : json_null());
    }
}
