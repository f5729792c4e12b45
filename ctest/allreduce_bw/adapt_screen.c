/* screen: the screen's verdict over described pairs (ar_screen.c) and the far rules of sizes and of the world
 * against the screen's pairs (ar_budget.c).
 * input.json: {"members": N, "pairs": [[member a, member b, round, best busbw GB/s], ...],
 *              "world": [[world busbw, screen's median pair busbw, bytes], ...] (optional)}
 * outcome: {"kind": "none" | "low" | "far", "member": the member named or -1, "pairs": its pairs, "below": of
 *           those below the kind's factor, "median": the median pair, "world_far": [each world entry far
 *           below the pairs]} */
#include <stdio.h>
#include <stdlib.h>

#include "ar_budget.h"
#include "ar_screen.h"
#include "fixture_adapt.h"

static json_t *world_far(const json_t *world)
{
    json_t *out = json_array();
    for (size_t i = 0; i < json_array_size(world); i++) {
        const json_t *w = json_array_get(world, i);
        bool far = ar_world_far_below_pairs(json_number_value(json_array_get(w, 0)),
                                            json_number_value(json_array_get(w, 1)),
                                            (uint64_t)json_number_value(json_array_get(w, 2)));
        json_array_append_new(out, json_boolean(far));
    }
    return out;
}

int fixture_adapt_screen(const char *case_dir, const json_t *in, json_t **outcome, char *err, size_t err_len)
{
    (void)case_dir;
    static const char *const keys[] = {"members", "pairs", "world", "comment", NULL};
    if (fixture_check_keys(in, keys, "input.json", err, err_len) != 0)
        return -1;
    const json_t *arr = json_object_get(in, "pairs");
    int n = (int)json_array_size(arr), members = (int)json_integer_value(json_object_get(in, "members"));
    ar_screen_pair *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    if (!p || members < 2) {
        snprintf(err, err_len, p ? "input.json: \"members\" (>= 2) is needed" : "out of memory");
        free(p);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const json_t *x = json_array_get(arr, (size_t)i);
        p[i] = (ar_screen_pair){
            {(int)json_integer_value(json_array_get(x, 0)), (int)json_integer_value(json_array_get(x, 1))},
            (int)json_integer_value(json_array_get(x, 2)),
            json_number_value(json_array_get(x, 3))};
    }
    ar_screen_verdict v;
    int rc = ar_screen_judge(p, n, members, &v);
    free(p);
    if (rc != 0) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    static const char *const kinds[] = {"none", "low", "far"};
    *outcome = json_pack("{s:s, s:i, s:i, s:i, s:f, s:o}", "kind", kinds[v.kind], "member", v.member, "pairs",
                         v.pairs, "below", v.below, "median", v.median, "world_far",
                         world_far(json_object_get(in, "world")));
    return *outcome ? 0 : -1;
}
