/* env_audit's part of the report: what one rank recorded, as JSON under "nodes". */
#ifndef ENV_JSON_H
#define ENV_JSON_H

#include <jansson.h>

#include "env_record.h"

/* The env_audit-specific fields of one rank for the report (ga_record_json_fn). */
json_t *env_record_json(const void *record, void *user);

#endif
