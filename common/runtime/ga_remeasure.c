#include "ga_remeasure.h"

#include <stdlib.h>

#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_log.h"

int ga_remeasure_loop(const ga_ctx *ctx, const ga_remeasure_spec *spec, int max_passes, void *mine,
                      void **all, void *user)
{
    int pass = 0;
    for (;;) {
        ga_phase("gathering %d records", ctx->world_size);
        ga_deadline_arm("gathering the records (pass %d)", pass + 1);
        ga_gather_records(ctx, mine, spec->record_size, all);
        ga_deadline_disarm();
        if (pass >= max_passes)
            return pass;
        unsigned mask = 0;
        if (ctx->world_rank == 0) {
            char why[512] = "";
            mask = spec->suspects(*all, ctx->world_size, user, why, sizeof why);
            if (mask)
                ga_log(spec->tag, "%s: %s: every rank measures it again (pass %d of at most %d)",
                       spec->program, why, pass + 1, max_passes);
        }
        /* Rank 0 decides; every rank runs the same passes, so none waits for another in a collective. */
        ga_deadline_arm("agreeing on what to measure again (pass %d)", pass + 1);
        GA_MPI_CHECK(MPI_Bcast(&mask, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (!mask)
            return pass;
        free(*all);
        *all = NULL;
        pass++;
        spec->measure_again(mask, mine, user);
    }
}
