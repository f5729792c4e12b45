/* allreduce_bw's part of the report: what one rank recorded, as JSON under "nodes" (a ga_record_json_fn). */
#ifndef AR_JSON_H
#define AR_JSON_H

#include <jansson.h>

json_t *ar_record_json(const void *record, void *user);

#endif
