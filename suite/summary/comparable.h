/* Whether two sets of figures of one program can be compared: the same profile, world size, node count and
 * conditions (what the program says its figures depend on: problem size, sweep, model, backend). A busbw
 * of a 1M sweep is no regression from a 16M one, and samples/s of a quick run no improvement over a standard
 * one. Used by `gpuaccept compare` and by baselines. Pure. */
#ifndef COMPARABLE_H
#define COMPARABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* What a program's figures were measured under, from a summary (its step, and the run's profile) or from a
 * program's own report: {profile, world_size, node_count, conditions} (a new object; absent facts are
 * left out). */
json_t *suite_measured_under(const json_t *run, const char *program);

/* Compares two of those. true when they match; else false and why, as "world_size 2 -> 4; max_bytes
 * 16777216 -> 1048576". A fact one side lacks (a report of an older gpuaccept) makes them not comparable;
 * one both lack does not. keys: the facts to compare (NULL: all four). */
bool suite_comparable(const json_t *old_under, const json_t *new_under, const char *const *keys, char *why,
                      size_t len);

#endif
