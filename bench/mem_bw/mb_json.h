/* mem_bw's part of the report: what one rank recorded, as JSON under "nodes" (a ga_record_json_fn). */
#ifndef MB_JSON_H
#define MB_JSON_H

#include <jansson.h>

json_t *mb_record_json(const void *record, void *user);

#endif
