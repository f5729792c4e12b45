#include "programs.h"

#include <jansson.h>
#include <string.h>

/* The table itself, suite_programs[], is generated from suite/registry/programs.json (registry_programs.c).
 */

int suite_program_index(const char *name)
{
    for (size_t i = 0; i < suite_n_programs; i++)
        if (strcmp(suite_programs[i].name, name) == 0)
            return (int)i;
    return -1;
}

void suite_program_names(const char *sep, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < suite_n_programs && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? sep : "", suite_programs[i].name);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}

static int print_json(FILE *out)
{
    json_t *list = json_array();
    for (size_t i = 0; i < suite_n_programs; i++) {
        const suite_program *p = &suite_programs[i];
        json_t *prefixes = json_array();
        char buf[128];
        snprintf(buf, sizeof buf, "%s", p->fault_prefixes);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
            json_array_append_new(prefixes, json_string(t));
        char doc[96];
        snprintf(doc, sizeof doc, "docs/%s.md", p->name);
        json_array_append_new(list, json_pack("{s:I, s:s, s:o, s:s, s:s, s:s}", "order", (json_int_t)(i + 1),
                                              "name", p->name, "fault_prefixes", prefixes, "doc", doc,
                                              "headline", p->headline, "purpose", p->purpose));
    }
    int rc = json_dumpf(list, out, JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(list);
    return rc;
}

int suite_programs_print(FILE *out, suite_list_format format)
{
    if (format == SUITE_LIST_JSON)
        return print_json(out);
    for (size_t i = 0; i < suite_n_programs; i++) {
        const suite_program *p = &suite_programs[i];
        if (fprintf(out, "%zu\t%s\t%s\tdocs/%s.md\t%s\t%s\n", i + 1, p->name, p->fault_prefixes, p->name,
                    p->headline, p->purpose) < 0)
            return -1;
    }
    return fflush(out) == 0 ? 0 : -1;
}
