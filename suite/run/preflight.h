/* The per-node preflight of gpuaccept run: before the multi-node steps, every node of the hostfile (given,
 * or the MPIJob operator's) or of the Slurm allocation is launched on alone, all at once, each bounded in
 * time: `mpirun --host NODE -np 1 gpuaccept node-check` or `srun -N1 -n1 -w NODE gpuaccept node-check`. A
 * node that cannot be launched on, does not answer in time, or sees fewer GPUs than the others is excluded
 * with a fault code naming it, and the steps run on the nodes that passed: one dead node does not blind
 * the acceptance of the others. */
#ifndef PREFLIGHT_H
#define PREFLIGHT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "hostfile.h"
#include "launch_plan.h"

typedef struct {
    const char *gpuaccept;       /* this front-end's path: node-check runs it on every node */
    const char *work_dir;        /* its logs and the hostfile of the nodes that passed go here */
    double limit_s;              /* each node's bound */
    const suite_hostlist *hosts; /* the hostfile's nodes (mpirun kinds), NULL under Slurm */
    const char *report_dir;      /* the steps' --report-dir, proved shared with rank 0's node; NULL: not */
} suite_preflight_in;

/* Runs the preflight for plan (nothing for a run on this machine) and narrows plan to the nodes that
 * passed. *record gets suite_run.json's "preflight" object (NULL when none ran), *passed the nodes that
 * passed. A node whose launch failed is launched once more after a short pause before it is excluded, and
 * its exclusion quotes the launcher's own line (ssh's, srun's). Returns 0, -1 with a message (the node list
 * could not be had, a hostfile could not be written), or -2 with one line when the report directory is not
 * the one rank 0's node writes to (a usage error: another --report-dir, or the front-end on that node). */
int suite_preflight_run(suite_launch *plan, const suite_preflight_in *in, json_t **record, size_t *passed,
                        char *err, size_t errlen);

#endif
