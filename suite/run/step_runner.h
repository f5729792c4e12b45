/* Runs one step of the suite: the launcher command in a session of its own, its output streamed
 * through, a bounded wait (SIGTERM to the group at the deadline, SIGKILL after a grace), and the outcome
 * classified. Nothing the step leaves behind survives it: its session, its descendants and the orphans
 * re-parented to the suite are killed before the step is reaped (proc_tree.h). */
#ifndef STEP_RUNNER_H
#define STEP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "attribution.h"
#include "step_status.h"

typedef struct {
    char *const *argv;           /* NULL-terminated; argv[0] is looked up in PATH */
    double timeout_s;            /* hard bound on the step, > 0 */
    double grace_s;              /* between SIGTERM and SIGKILL */
    double heartbeat_s;          /* a progress line after this long without output, 0 = never */
    const char *label;           /* "step 2/5 gemm_flops", for the heartbeat */
    const char *slurm_job;       /* under srun: the job id, whose step is scancelled at the deadline */
    const char *slurm_step_name; /* the step's name in squeue (srun names it after its program) */
} suite_step_spec;

typedef struct {
    bool started;     /* fork succeeded */
    bool timed_out;   /* the suite killed it at the deadline */
    bool interrupted; /* the suite was asked to stop (SIGINT/SIGTERM) and killed it */
    int exit_code;    /* exit status, or -1 when it ended on a signal */
    int signal;       /* the signal that ended it, 0 if none */
    double duration_s;
    char result_line[512]; /* the step's last "[RESULT] ..." line, "" if none */
    int survivors;         /* processes of the step still alive after it was reaped (0: none left) */
    int slurm_cancelled;   /* Slurm steps scancelled at the deadline (srun only) */
    suite_attr_scan attr;  /* the node the step's output blames, if it died */
} suite_step_result;

/* Runs the step to its end. Returns 0 when the step ran (whatever its outcome), -1 if it could not be started
 * (pipe or fork failed; err says why). */
int suite_step_run(const suite_step_spec *spec, suite_step_result *res, char *err, size_t errlen);

/* Installs SIGINT/SIGTERM handlers that ask the running step to stop; suite_stop_requested() then stays true.
 */
void suite_step_install_signal_handlers(void);
/* "SIGINT" or "SIGTERM": the signal that stopped the run; NULL while none did. */
const char *suite_stop_signal_name(void);
bool suite_stop_requested(void);

/* How the step ended, for its status (step_status.h: the summary reads the same table back). */
static inline suite_step_end suite_step_end_of(const suite_step_result *r)
{
    return (suite_step_end){r->interrupted, r->timed_out, r->signal, r->exit_code};
}

#endif
