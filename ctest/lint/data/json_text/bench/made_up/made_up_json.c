/* lint.json_text_catches_raw_text: a made-up writer with three raw strings from outside (the lint must name
 * each) beside the forms it allows. Never compiled. */
#include <jansson.h>

#include "ga_text.h"

json_t *made_up_json(const char *host, const char *gpu_name, const char *path, int n);

json_t *made_up_json(const char *host, const char *gpu_name, const char *path, int n)
{
    json_t *o = json_pack("{s:s, s:i, s:s}", "host", host, "n", n, "state", n ? "measured" : "failed");
    json_object_set_new(o, "gpu", json_string(gpu_name));
    json_object_set_new(o, "data", json_pack("{s:[s,o]}", "paths", n ? path : "none", ga_json_text(path)));
    json_object_set_new(o, "kept", ga_json_text(host));
    json_object_set_new(o, "what", json_string("a literal"));
    return o;
}
