/* The figures the estimates assume and the table of the programs' models behind estimate.h, apart so that the
 * unit tests can give the models figures of their own (simple enough to compute a case by hand). */
#ifndef ESTIMATE_MODEL_H
#define ESTIMATE_MODEL_H

#include <stddef.h>

#include "estimate.h"
#include "ga_estimate.h"

/* One slow node: its links this many times slower. */
#define EST_SLOW_FACTOR GA_EST_SLOW_FACTOR

/* What the models take as given, per backend (est_figures_for states the sources). */
typedef ga_est_figures est_figures;

/* The figures for cluster c (its SKU's where the baseline gives them). */
void est_figures_for(const suite_est_cluster *c, est_figures *f);

/* Each registered program's model, in run order: generated from suite/registry/programs.json
 * (cmake/GpuacceptRegistry.cmake), `<program>_estimate` of the program's own folder. */
typedef struct {
    const char *program;
    ga_estimate_fn *estimate;
} suite_program_estimate;

extern const suite_program_estimate suite_program_estimates[];
extern const size_t suite_n_program_estimates;

#endif
