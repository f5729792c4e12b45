/* The environment variables worth recording: a fixed allow-list of names and prefixes, never the whole
 * environment, with values of names that look like secrets redacted. Pure. */
#ifndef GA_ENVVARS_H
#define GA_ENVVARS_H

#include <stdbool.h>
#include <stddef.h>

bool ga_envvar_allowed(const char *name);
bool ga_envvar_is_secret(const char *name);

/* Whether a value has the shape of a credential (AKIA..., sk-live-..., ghp_..., a PEM private key). */
bool ga_envvar_value_is_secret(const char *value);

/* value as it may be written: GA_REDACTED for a credential-shaped value, else value with the user:password@
 * of every URL replaced by GA_REDACTED (truncated to len - 1 characters). */
void ga_envvar_redact_value(const char *value, char *out, size_t len);

/* Calls fn for each allowed variable of envp (NAME=VALUE strings), in sorted order by name, with the value
 * already redacted. */
typedef void (*ga_envvar_fn)(const char *name, const char *value, void *user);
void ga_envvars_collect(char *const *envp, ga_envvar_fn fn, void *user);

#define GA_REDACTED "<redacted>"

#endif
