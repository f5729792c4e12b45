/* The front-end's outputs beside the reports, one table (outputs.c): summary.json, summary.md, summary.html,
 * drain.sh, gpuaccept-k8s.sh and gpuaccept-k8s.json, gpuaccept.prom and gpuaccept-nodes/,
 * gpuaccept-junit.xml; and running a hand-off script. */
#ifndef OUTPUTS_WRITE_H
#define OUTPUTS_WRITE_H

#include <jansson.h>
#include <stddef.h>

/* Writes every output into dir: the summary set as one, then the hand-off files, each atomically. 0, or -1
 * with a message, or SUITE_OUTPUTS_TOO_LARGE when summary.json would be larger than the front-end reads
 * (SUITE_MAX_INPUT_BYTES): then nothing is written. */
int suite_outputs_write(const json_t *summary, const char *dir, char *err, size_t errlen);
#define SUITE_OUTPUTS_TOO_LARGE (-2)

/* Runs `bash dir/script` (--drain, --apply-k8s), its output streamed through. Its exit status, or -1 when
 * it could not be started or was killed. */
int suite_handoff_exec(const char *dir, const char *script);

#endif
