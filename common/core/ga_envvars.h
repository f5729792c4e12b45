/* The environment variables worth recording: a fixed allow-list of names and prefixes, never the whole
 * environment, with values of names that look like secrets redacted. Pure. */
#ifndef GA_ENVVARS_H
#define GA_ENVVARS_H

#include <stdbool.h>
#include <stddef.h>

bool ga_envvar_allowed(const char *name);
bool ga_envvar_is_secret(const char *name);

/* Whether any part of a value is a credential by its shape (ga_envvar_redact_value would hide something). */
bool ga_envvar_value_is_secret(const char *value);

/* value as it may be written (truncated to len - 1 characters), each credential in it replaced by
 * GA_REDACTED: a key with its issuer's prefix (AKIA..., sk-..., ghp_..., AIza..., nvapi-..., 40 shapes), a
 * JWT, the user:password of a URL, the value of a parameter that names a credential (?token=, &sig=,
 * AccountKey=, password=), a PEM block and what follows it, and a run of 20 or more characters that reads as
 * random (upper and lower case and digits, or 32 hex digits and more: an AWS secret key has no prefix).
 * A webhook URL (Slack, Discord, Teams, ...) or a key with a public id part (SendGrid SG.<id>.<secret>, Slack
 * xox?-..., Tailscale tskey-...) anywhere in the value hides the whole value: no id part, no neighbour is
 * written beside it. ctest/common/data/secrets/corpus.tsv is the corpus each shape is tested against. */
void ga_envvar_redact_value(const char *value, char *out, size_t len);

/* The same for variable name: the variables a report needs as they are (ga_envvar_value_plain) are spared the
 * run-of-random-characters rule only. */
void ga_envvar_redact(const char *name, const char *value, char *out, size_t len);

/* Whether name's ordinary values would read as random (GPU UUID lists, device names, host lists, paths) and
 * the report needs them as they are: CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, SLURM_STEP_GPUS,
 * SLURM_JOB_NODELIST, LD_LIBRARY_PATH, NCCL_IB_HCA, NCCL_SOCKET_IFNAME, UCX_NET_DEVICES. */
bool ga_envvar_value_plain(const char *name);

/* Calls fn for each allowed variable of envp (NAME=VALUE strings), in sorted order by name, with the value
 * already redacted. */
typedef void (*ga_envvar_fn)(const char *name, const char *value, void *user);
void ga_envvars_collect(char *const *envp, ga_envvar_fn fn, void *user);

#define GA_REDACTED "<redacted>"

#endif
