/* How a step ended, in the summary's words: the status the run record gives each step (from its exit code,
 * signal, timeout or stop), and the finding a fault status becomes, with the node the record names. The
 * runner records them and the merge reads them back: both sides use this one table. Pure. */
#ifndef STEP_STATUS_H
#define STEP_STATUS_H

#include <jansson.h>
#include <stdbool.h>

/* A status that is a fault of the step: its finding code, the exit class, and the words of its message. */
typedef struct {
    const char *status, *code;
    int exit_class;
    const char *what;
} suite_step_fault;

/* How a step's process ended, as the runner saw it. */
typedef struct {
    bool interrupted; /* the suite was asked to stop and killed it */
    bool timed_out;   /* killed at the deadline */
    int signal;       /* the signal that ended it, 0 if none */
    int exit_code;    /* exit status, or -1 when it ended on a signal */
} suite_step_end;

/* Status of a step from how it ended (pure):
 *   "pass" exit 0 with a report, "fail" exit 1 with a report (a check failed), "usage_error" 2, "env_error"
 * 3, "timeout" 4 or killed at the deadline, "internal_error" 5, "crashed" a signal, any other status (mpirun
 *   reports a rank killed by a signal as 128+n), or 0/1 without a report, "interrupted", "missing" (no
 *   program to run). */
const char *suite_step_status(const suite_step_end *end, bool program_found, bool have_report);

/* Every status suite_run.json may give a step: the faults, and "pass", "skipped", "not_run". */
bool suite_step_status_known(const char *status);

/* The fault a status is, NULL when it is none ("pass", "skipped", "not_run"). */
const suite_step_fault *suite_step_fault_of(const char *status);

/* Exit code a failure with this fault code implies: 1 for a check that found a fault, 2..5 for a step that
 * could not measure (STEP_TIMEOUT 4, STEP_ENV_ERROR 3, ...). */
int suite_fault_exit_class(const char *code);

/* A step's failure finding gets the host and rank the run record's step names (its "node"), and its message
 * says where, or "node unknown". */
void suite_step_fault_name_node(json_t *finding, const json_t *run_step);

#endif
