#include "ddp_bucket.h"

#include <string.h>

void ddp_bucket_plan_build(const ddp_layout *m, size_t elem_size, size_t cap_bytes, ddp_bucket_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    int cur = -1;
    size_t cur_bytes = 0;
    for (int i = m->n_linear - 1; i >= 0; i--) {
        size_t bytes = m->layer_len[i] * elem_size;
        if (cur < 0 || cur_bytes + bytes > cap_bytes) {
            cur = plan->n++;
            plan->b[cur].last_layer = i;
            cur_bytes = 0;
        }
        plan->b[cur].first_layer = i;
        cur_bytes += bytes;
        plan->bucket_of_layer[i] = cur;
    }
    for (int k = 0; k < plan->n; k++) {
        ddp_bucket *b = &plan->b[k];
        b->offset = m->layer_off[b->first_layer];
        b->count = m->layer_off[b->last_layer] + m->layer_len[b->last_layer] - b->offset;
        if (b->last_layer == m->n_linear - 1)
            b->count += DDP_N_STATS; /* the loss slots follow the last layer */
    }
}

int ddp_bucket_completed_by(const ddp_bucket_plan *plan, int layer)
{
    int k = plan->bucket_of_layer[layer];
    return plan->b[k].first_layer == layer ? k : -1;
}
