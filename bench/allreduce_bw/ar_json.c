#include "ar_json.h"

#include "ar_record.h"

json_t *ar_record_json(const void *record, void *user)
{
    (void)user;
    const ar_record *r = record;
    if (r->n_sizes <= 0)
        return json_pack("{s:i}", "group", r->group);
    const ar_sample *last = &r->samples[r->n_sizes - 1];
    int64_t wrong = 0;
    for (int s = 0; s < r->n_sizes; s++)
        for (int pl = 0; pl < AR_PLACEMENTS; pl++)
            wrong += r->samples[s].wrong[pl] > 0 ? r->samples[s].wrong[pl] : 0;
    return json_pack("{s:{s:f, s:f}, s:I}", "time_at_max_us", "out-of-place", last->time_s[0] * 1e6,
                     "in-place", last->time_s[1] * 1e6, "wrong", (json_int_t)wrong);
}
