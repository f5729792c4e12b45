/* Acceptance profiles of `gpuaccept run`: which steps run, with which arguments, under which step timeout.
 * A profile is data, a JSON file (format in docs/suite.md, "Profiles"); the built-in quick, standard and
 * full are written in that same format and `gpuaccept run --profile NAME --dump-profile` prints them.
 * Arguments may hold placeholders that the run fills from what it knows (GPUs per node, the SKU baseline,
 * --burn, whether there are GPUs); one it cannot fill is left out with the option before it, and the reason
 * goes to the summary's "not covered" list rather than an invented figure. Pure: no MPI, no launching. */
#ifndef PROFILE_H
#define PROFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fabric.h"
#include "hostfile.h"

#define SUITE_PROFILE_SCHEMA "gpuaccept-profile"
#define SUITE_PROFILE_SCHEMA_VERSION 1
#define SUITE_PROFILE_DEFAULT "standard"
#define SUITE_PROFILE_DEFAULT_BURN_S 600.0

/* What the run knows when it fills a profile's placeholders. */
typedef struct {
    int expect_gpus;                  /* GPUs per node (hostfile slots, Slurm, this machine); 0 = unknown */
    const char *expect_gpus_why;      /* when 0: why, for the summary */
    const json_t *baseline;           /* the SKU baseline; NULL = none */
    const char *no_baseline_why;      /* when NULL: why ("GPU model unknown") */
    double tolerance_pct;             /* --tolerance; < 0: the baseline's, else 10 */
    int node_count;                   /* nodes of the run, 0 = unknown */
    int world_size;                   /* ranks of the run, 0 = unknown */
    double burn_s;                    /* --burn */
    bool gpu;                         /* GPUs to run on: the longest sweeps apply */
    const suite_fabric_facts *fabric; /* node_health's, once it ran; NULL before (those placeholders wait) */
} suite_profile_env;

/* The built-in profiles, in the file format --profile FILE reads (docs/suite.md), so that --dump-profile can
 * print them for a site to copy and edit: suite/registry/profiles/<name>.json, compiled in
 * (registry_profiles.c, generated), in the order of programs.json's builtin_profiles. */
typedef struct {
    const char *name, *text;
} suite_builtin_profile;
extern const suite_builtin_profile suite_builtin_profiles[];
extern const size_t suite_n_builtin_profiles;

/* The text of a built-in profile (quick, standard, full), NULL for another name. */
const char *suite_profile_builtin(const char *name);

/* The built-in names, "quick standard full". */
const char *suite_profile_builtin_names(void);

/* Checks a profile's shape: known keys only, known programs, string arguments, known placeholders. 0, or -1
 * with a one-line message. */
int suite_profile_validate(const json_t *profile, char *err, size_t errlen);

/* spec: a built-in name or a file. *out: the profile; source: "built-in" or the path. 0, or -1 with a
 * one-line message (unreadable, not JSON, invalid). */
int suite_profile_load(const char *spec, json_t **out, char *source, size_t srclen, char *err, size_t errlen);

/* Whether the profile runs program (it has a "steps" entry for it). */
bool suite_profile_runs(const json_t *profile, const char *program);

/* The profile's step timeout in seconds, 0 when it gives none. */
double suite_profile_step_timeout(const json_t *profile);

/* Appends program's arguments, placeholders filled, to args (an array of strings); each argument left out
 * adds one line to not_covered (no duplicates). 0, or -1 when the profile does not run program. */
int suite_profile_args(const json_t *profile, const char *program, const suite_profile_env *env, json_t *args,
                       json_t *not_covered);

/* Whether args (a step's, as suite_profile_args left them) hold a placeholder that waits for node_health's
 * report: {fabric_min:...} and {fabric_net} of a run on more than one node (or an unknown number). */
bool suite_profile_args_deferred(const json_t *args);

/* args with those placeholders filled from env->fabric (set); an argument left out adds its line to
 * not_covered, and takes its option with it. A new array. */
json_t *suite_profile_fill_deferred(const json_t *args, const suite_profile_env *env, const char *program,
                                    json_t *not_covered);

/* The busbw a ring allreduce of ranks ranks on nodes nodes reaches at bytes bytes where its bandwidth term
 * alone gives busbw_gbps: NCCL's ring latency model (profile.c says which figures and why). busbw_gbps itself
 * for one node or one rank. Pure. */
double suite_ring_allreduce_floor(double busbw_gbps, double bytes, int ranks, int nodes);

/* Splits s into words as a POSIX shell would, without running one: blanks separate, '...' is literal, "..."
 * keeps \" \\ \$ \` escapes, a backslash outside quotes escapes the next character; no expansion of any
 * kind. Appends the words to words. 0, or -1 with a message (an unterminated quote, a trailing backslash). */
int suite_split_words(const char *s, json_t *words, char *err, size_t errlen);

/* The step option gpuaccept run owns that word would set ("report-dir", "run-id", "timeout": the option
 * itself,
 * --opt=VALUE, or a prefix getopt_long would take for it), else NULL. The run gives every step its own report
 * directory, run id and timeout; a profile or --args that set them again would send the report elsewhere,
 * into another run, or past the step's bound. */
const char *suite_owned_option(const char *word);

/* suite_split_words for --args PROGRAM='...', refusing a word suite_owned_option names. 0, or -1 with a
 * message. */
int suite_split_program_args(const char *text, json_t *words, char *err, size_t errlen);

/* The facts of a run that suite_profile_env_make turns into a suite_profile_env. */
typedef struct {
    int launch_kind;             /* suite_launch_kind */
    int np;                      /* ranks of the plan, 0 = the launcher's */
    const suite_hostlist *hosts; /* the hostfile's hosts, NULL or empty when none */
    int local_gpus;              /* GPUs on this machine */
    const char *baseline_spec;   /* --baseline: auto, none or a file (checked already) */
    double tolerance_pct, burn_s;
} suite_profile_run_facts;

/* Fills env from the run's facts (profile_env.c): GPUs per node from the hostfile's slots, Slurm's
 * SLURM_GPUS_ON_NODE or this machine; the SKU baseline from --baseline FILE, or with auto the shipped one of
 * the GPU model this machine reports. *baseline holds the loaded baseline (json_decref it; NULL when none).
 * 0, or -1 with a message (a baseline file that cannot be read). */
int suite_profile_env_make(const suite_profile_run_facts *facts, suite_profile_env *env, json_t **baseline,
                           char *err, size_t errlen);

#endif
