/* The names the front-end's files share between the layer that writes them (handoff/, the renderers) and the
 * one that reads a report directory back (summary/): a loader must know which .json files are no report. */
#ifndef OUTPUTS_H
#define OUTPUTS_H

/* The fault code of a --drain or --apply-k8s script that failed: an environment error of the run (exit 3). */
#define SUITE_HANDOFF_FAILED "HANDOFF_FAILED"

/* The hand-off file that ends in .json but is no report: the loaders pass it over. */
#define SUITE_HANDOFF_K8S_JSON "gpuaccept-k8s.json"

#endif
