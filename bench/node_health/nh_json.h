/* node_health's record as the report's "nodes" show it (the fields ga_report_add_nodes adds per rank). */
#ifndef NH_JSON_H
#define NH_JSON_H

#include <jansson.h>

/* ga_record_json_fn over an nh_record. */
json_t *nh_record_json(const void *record, void *user);

#endif
