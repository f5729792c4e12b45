#include "nh_sku.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "nh_ports.h"

nh_expect nh_expect_none(void)
{
    return (nh_expect){.name = "",
                       .gpus = -1,
                       .nvlinks_per_gpu = -1,
                       .pcie_gen = -1,
                       .pcie_width = -1,
                       .hcas = -1,
                       .ib_rate_gbps = -1,
                       .compute_hcas = "",
                       .require_gdr = false};
}

static int int_field(const json_t *o, const char *key, int *out, const char *where, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000) {
        snprintf(err, errlen, "%s: \"%s\" must be a non-negative integer", where, key);
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

static int check_keys(const json_t *o, const char *const *allowed, const char *where, char *err,
                      size_t errlen)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        int known = 0;
        for (const char *const *a = allowed; *a; a++)
            known |= strcmp(*a, key) == 0;
        if (!known) {
            snprintf(err, errlen, "%s: unknown key \"%s\"", where, key);
            return -1;
        }
    }
    return 0;
}

/* The network part of a SKU: the compute ports' rate and names, and whether GPUDirect RDMA is required. */
static int parse_network(const json_t *o, const char *where, nh_expect *e, char *err, size_t errlen)
{
    const json_t *rate = json_object_get(o, "ib_rate_gbps"), *hcas = json_object_get(o, "compute_hcas");
    if (rate) {
        if (!json_is_number(rate) || json_number_value(rate) <= 0) {
            snprintf(err, errlen, "%s: \"ib_rate_gbps\" must be a positive number", where);
            return -1;
        }
        e->ib_rate_gbps = json_number_value(rate);
    }
    if (hcas) {
        char why[128];
        if (!json_is_string(hcas) || json_string_length(hcas) >= sizeof e->compute_hcas ||
            nh_ib_list_check(json_string_value(hcas), why, sizeof why)) {
            snprintf(err, errlen, "%s: \"compute_hcas\" must be a list as NCCL_IB_HCA takes it%s%s", where,
                     json_is_string(hcas) ? ": " : "", json_is_string(hcas) ? why : "");
            return -1;
        }
        snprintf(e->compute_hcas, sizeof e->compute_hcas, "%s", json_string_value(hcas));
    }
    /* "require_peermem" is the old name of "require_gdr": SKU files written before issue 40 keep parsing and
     * mean what they meant between nodes (GPUDirect RDMA is required); the node check no longer fails on it.
     */
    static const char *const gdr_keys[] = {"require_gdr", "require_peermem"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(o, gdr_keys[k]);
        if (!v)
            continue;
        if (!json_is_boolean(v)) {
            snprintf(err, errlen, "%s: \"%s\" must be true or false", where, gdr_keys[k]);
            return -1;
        }
        e->require_gdr |= json_is_true(v);
    }
    return 0;
}

static int parse_sku(const json_t *o, int i, nh_sku_table *t, char *err, size_t errlen)
{
    static const char *const keys[] = {
        "name", "match",        "exclude",      "gpus",        "nvlinks_per_gpu", "pcie_gen", "pcie_width",
        "hcas", "ib_rate_gbps", "compute_hcas", "require_gdr", "require_peermem", NULL};
    char where[64];
    snprintf(where, sizeof where, "skus[%d]", i);
    if (!json_is_object(o)) {
        snprintf(err, errlen, "%s: not an object", where);
        return -1;
    }
    if (check_keys(o, keys, where, err, errlen))
        return -1;
    nh_expect *e = &t->skus[i];
    *e = nh_expect_none();
    const json_t *name = json_object_get(o, "name"), *match = json_object_get(o, "match");
    if (!json_is_string(name) || !json_string_length(name) || json_string_length(name) >= sizeof e->name) {
        snprintf(err, errlen, "%s: \"name\" must be a short string", where);
        return -1;
    }
    snprintf(e->name, sizeof e->name, "%s", json_string_value(name));
    if (!json_is_array(match) || json_array_size(match) == 0 || json_array_size(match) > NH_MAX_MATCH) {
        snprintf(err, errlen, "%s: \"match\" must list 1 to %d GPU name parts", where, NH_MAX_MATCH);
        return -1;
    }
    for (size_t m = 0; m < json_array_size(match); m++) {
        const json_t *s = json_array_get(match, m);
        if (!json_is_string(s) || !json_string_length(s) || json_string_length(s) >= sizeof t->match[i][m]) {
            snprintf(err, errlen, "%s: \"match\" entries must be short non-empty strings", where);
            return -1;
        }
        snprintf(t->match[i][m], sizeof t->match[i][m], "%s", json_string_value(s));
    }
    const json_t *exclude = json_object_get(o, "exclude");
    if (exclude && (!json_is_array(exclude) || json_array_size(exclude) > NH_MAX_MATCH)) {
        snprintf(err, errlen, "%s: \"exclude\" must list at most %d GPU name parts", where, NH_MAX_MATCH);
        return -1;
    }
    for (size_t m = 0; exclude && m < json_array_size(exclude); m++) {
        const json_t *s = json_array_get(exclude, m);
        if (!json_is_string(s) || !json_string_length(s) ||
            json_string_length(s) >= sizeof t->exclude[i][m]) {
            snprintf(err, errlen, "%s: \"exclude\" entries must be short non-empty strings", where);
            return -1;
        }
        snprintf(t->exclude[i][m], sizeof t->exclude[i][m], "%s", json_string_value(s));
    }
    if (int_field(o, "gpus", &e->gpus, where, err, errlen) ||
        int_field(o, "nvlinks_per_gpu", &e->nvlinks_per_gpu, where, err, errlen) ||
        int_field(o, "pcie_gen", &e->pcie_gen, where, err, errlen) ||
        int_field(o, "pcie_width", &e->pcie_width, where, err, errlen) ||
        int_field(o, "hcas", &e->hcas, where, err, errlen))
        return -1;
    return parse_network(o, where, e, err, errlen);
}

int nh_sku_table_parse(const char *json_text, nh_sku_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    json_error_t je;
    json_t *root = json_loads(json_text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "not JSON: %s (line %d)", je.text, je.line);
        return -1;
    }
    static const char *const keys[] = {"comment", "thresholds", "skus", NULL};
    static const char *const th_keys[] = {"ecc_corrected_volatile", "ib_port_counter", "nvlink_counter",
                                          "pcie_replay_counter", NULL};
    int rc = -1;
    const json_t *th = json_object_get(root, "thresholds"), *skus = json_object_get(root, "skus");
    if (!json_is_object(root) || check_keys(root, keys, "the SKU file", err, errlen))
        goto out;
    if (!json_is_object(th) || check_keys(th, th_keys, "thresholds", err, errlen)) {
        if (!json_is_object(th))
            snprintf(err, errlen, "the SKU file has no \"thresholds\" object");
        goto out;
    }
    int64_t *slots[] = {&t->thresholds.ecc_corrected_volatile, &t->thresholds.ib_port_counter,
                        &t->thresholds.nvlink_counter, &t->thresholds.pcie_replay_counter};
    t->thresholds.pcie_replay_counter = 100; /* optional: SKU files written before it still parse */
    for (int i = 0; th_keys[i]; i++) {
        const json_t *v = json_object_get(th, th_keys[i]);
        if (!v && i == 3)
            continue;
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            snprintf(err, errlen, "thresholds: \"%s\" must be a non-negative integer", th_keys[i]);
            goto out;
        }
        *slots[i] = json_integer_value(v);
    }
    if (!json_is_array(skus) || json_array_size(skus) > NH_MAX_SKUS) {
        snprintf(err, errlen, "\"skus\" must be a list of at most %d entries", NH_MAX_SKUS);
        goto out;
    }
    for (size_t i = 0; i < json_array_size(skus); i++)
        if (parse_sku(json_array_get(skus, i), (int)i, t, err, errlen))
            goto out;
    t->n = (int)json_array_size(skus);
    rc = 0;
out:
    json_decref(root);
    return rc;
}

const nh_expect *nh_sku_by_name(const nh_sku_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->skus[i].name, name) == 0)
            return &t->skus[i];
    return NULL;
}

static bool excluded(const nh_sku_table *t, int i, const char *gpu_name)
{
    for (int m = 0; m < NH_MAX_MATCH && t->exclude[i][m][0]; m++)
        if (strstr(gpu_name, t->exclude[i][m]))
            return true;
    return false;
}

const nh_expect *nh_sku_match(const nh_sku_table *t, const char *gpu_name)
{
    for (int i = 0; i < t->n; i++)
        for (int m = 0; m < NH_MAX_MATCH && t->match[i][m][0]; m++)
            if (strstr(gpu_name, t->match[i][m]) && !excluded(t, i, gpu_name))
                return &t->skus[i];
    return NULL;
}
