/* lm_train's preparation and phases on every rank: the data (synthetic chain or shard) agreed by all ranks,
 * the memory check before training, the trainer of the backend, the time each phase has, and the scaling
 * phase in which each node (or group of ranks) trains alone. */
#ifndef LM_SETUP_H
#define LM_SETUP_H

#include <jansson.h>
#include <stdbool.h>

#include "ga_backend.h"
#include "ga_runtime.h"
#include "lm_loop.h"
#include "lm_opts.h"
#include "lm_record.h"
#include "lm_trainer.h"

typedef struct {
    lm_markov markov;
    lm_shard shard;
    lm_source src;
    bool have_markov, have_shard;
    char what[GA_PATH_MAX + 32]; /* "synthetic order-1 Markov stream (seed 1)" or "shard FILE (N tokens)" */
    double loss_floor;           /* the chain's entropy; 0 for a shard */
} lm_dataset;

/* Collective: loads or builds the data. Returns -1 to go on, or the exit code every rank ends with (a file
 * rank 0 cannot use: 2 with one line; one only other ranks cannot read: 3 on those). */
int lm_data_prepare(const ga_ctx *ctx, const lm_opts *o, const lm_config *cfg, lm_dataset *ds);
void lm_data_free(lm_dataset *ds);

/* Collective: the trainer of the backend over comm, or NULL with err (every rank alike). */
lm_trainer *lm_make_trainer(const ga_ctx *ctx, const lm_trainer_config *cfg, ga_backend backend,
                            MPI_Comm comm, char *err, size_t errlen);

/* The end (ga_now clock) of a phase that gets `share` of the time left before the reserve (ga_train_reserve:
 * the gathers, the remeasurement, the analysis and the report); 0 without --timeout. */
double lm_phase_end(double share);

/* Collective over the world: each group (node, or --scaling-ranks consecutive ranks) trains alone for its
 * share of the time; its figures into mine. Returns false with a not-covered line in why when the phase
 * cannot run (a single group). */
bool lm_scaling_phase(const ga_ctx *ctx, const lm_opts *o, const lm_trainer_config *tc, const lm_source *src,
                      ga_backend backend, lm_record *mine, char *why, size_t why_len);

#endif
