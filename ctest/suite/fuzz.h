/* What the fuzzer's files share (fuzz_inputs.c: the driver, merge and IDX rounds; fuzz_files.c: baselines,
 * profiles, hostfiles and compare). */
#ifndef FUZZ_H
#define FUZZ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    long rounds, loaded, refused, merged, passed_broken, idx_rounds, idx_loaded;
    long relabelled, renamed, dup_keys; /* merge rounds that made each issue-27 case */
    long baseline_rounds, baseline_taken, profile_rounds, profile_taken, hostfile_rounds, hostfile_taken;
    long compare_rounds, compare_refused;
} counts;

/* Deterministic: the same sequence every run. */
unsigned long long rnd(void);
size_t below(size_t n);
/* One value somewhere in j replaced by an awkward one, or its key removed. */
void mutate_tree(json_t *j);
/* Bytes of text flipped, cut or inserted; the new length. */
size_t mutate_bytes(char *text, size_t len, size_t cap);
int write_file(const char *path, const void *data, size_t len);
/* text with a second copy of key (its value as given) inserted as the first member of the top object: a
 * document a JSON reader must refuse. A new string (free it). */
char *duplicate_key(const char *text, const char *member);

/* The rounds of fuzz_files.c; each returns 0, or -1 when it could not be prepared. baselines_dir: the
 * shipped baselines. */
int baseline_round(const char *work, const char *baselines_dir, const json_t *seed_summary, counts *c);
int profile_round(const char *work, counts *c);
int hostfile_round(const char *work, counts *c);
int compare_round(const json_t *seed_summary, counts *c);

#endif
