/* gemm_flops's part of the report: what one rank recorded, as JSON under "nodes" (a ga_record_json_fn). */
#ifndef GF_JSON_H
#define GF_JSON_H

#include <jansson.h>

json_t *gf_record_json(const void *record, void *user);

#endif
