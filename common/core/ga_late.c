#include "ga_late.h"

#include <stdlib.h>

#include "ga_stats.h"

double ga_late_threshold(double bound_s)
{
    if (bound_s <= 0)
        return GA_LATE_MIN_S;
    double t = GA_LATE_SHARE * bound_s > GA_LATE_MIN_S ? GA_LATE_SHARE * bound_s : GA_LATE_MIN_S;
    return t < GA_LATE_MAX_SHARE * bound_s ? t : GA_LATE_MAX_SHARE * bound_s;
}

int ga_late_judge(const ga_late_peer *p, int n, double bound_s, bool *late, ga_late_verdict *out)
{
    *out = (ga_late_verdict){.threshold_s = ga_late_threshold(bound_s)};
    bool any = false;
    for (int r = 0; r < n; r++)
        if (p[r].answered && (!any || p[r].seq > out->most)) {
            out->most = p[r].seq;
            any = true;
        }
    double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (!w)
        return -1;
    size_t m = 0;
    for (int r = 0; r < n; r++)
        if (p[r].answered && p[r].seq == out->most)
            w[m++] = p[r].waited_s;
    out->waited_s = m ? ga_median(w, m) : 0;
    free(w);
    bool evidence = out->waited_s >= out->threshold_s;
    for (int r = 0; r < n; r++) {
        bool behind = p[r].answered && p[r].seq < out->most;
        late[r] = behind && evidence;
        out->behind += behind;
        out->late += late[r];
    }
    return 0;
}
