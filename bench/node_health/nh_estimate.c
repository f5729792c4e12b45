/* node_health's run time for `gpuaccept run --dry-run` (ga_estimate.h): its checks take a fixed time,
 * whatever the arguments and the links. */
#include "ga_estimate.h"

ga_estimate_fn node_health_estimate; /* named by the registry, called through its generated table */

int node_health_estimate(const ga_estimate_in *in, ga_estimate_out *out)
{
    return ga_est_fixed(in, in->f->nh_s, out);
}
