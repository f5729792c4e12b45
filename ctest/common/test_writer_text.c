/* The programs' JSON writers keep a record whose text from outside is not UTF-8 (issue 45, item 5): a GPU or
 * CPU model, a library's error message, a data path, a host name and an environment value with a byte 0xFF
 * each come out whole, the byte written as \xFF, where jansson used to drop the record (json_pack failed,
 * json_string returned NULL). */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ar_nccltests.h"
#include "ddp_json.h"
#include "ga_test.h"
#include "gf_json.h"
#include "gf_record.h"
#include "mb_json.h"
#include "mb_record.h"

#define BAD "\xff"

/* The field at key, dumped: NULL when the object or the field is missing. */
static const char *text_at(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void gemm_record(void)
{
    static gf_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.model, sizeof r.model, "NVIDIA H100" BAD);
    snprintf(r.library, sizeof r.library, "cuBLASLt" BAD);
    snprintf(r.group, sizeof r.group, "group" BAD);
    r.hdr.device_index = -1;
    r.dt[0].state = GF_FAILED;
    snprintf(r.dt[0].note, sizeof r.dt[0].note, "error" BAD);
    json_t *o = gf_record_json(&r, NULL);
    CHECKF(o != NULL, "gemm_flops' record kept");
    CHECK_STR(text_at(o, "model"), "NVIDIA H100\\xFF");
    CHECK_STR(text_at(o, "library"), "cuBLASLt\\xFF");
    CHECK_STR(text_at(o, "sdc_group"), "group\\xFF");
    json_t *gemm = json_object_get(o, "gemm");
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach(gemm, k, v)
        CHECK_STR(text_at(v, "note"), "error\\xFF");
    CHECKF(json_object_size(gemm) == 1, "the failed dtype kept (%zu)", json_object_size(gemm));
    json_decref(o);
}

static void mem_record(void)
{
    static mb_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.model, sizeof r.model, "Xeon" BAD);
    r.hdr.device_index = -1;
    r.numa_node = -1;
    r.t[0].state = MB_FAILED;
    snprintf(r.t[0].note, sizeof r.t[0].note, "error" BAD);
    json_t *o = mb_record_json(&r, NULL);
    CHECKF(o != NULL, "mem_bw's record kept");
    CHECK_STR(text_at(o, "model"), "Xeon\\xFF");
    CHECKF(json_object_size(json_object_get(o, "bandwidth")) == 1, "the failed test kept");
    json_decref(o);
}

static void ddp_conditions(void)
{
    ddp_run_info info = {.backend = "host", .dtype = "fp32", .data = "/data/shard" BAD};
    json_t *c = ddp_conditions_json(&info, 10);
    CHECKF(c != NULL, "ddp_smoke's conditions kept");
    CHECK_STR(text_at(c, "data"), "/data/shard\\xFF");
    json_decref(c);
}

/* allreduce_bw -J: NCCL_IB_DISABLE=$'1\xff' keeps its entry; a host and a GPU name with such a byte keep the
 * device's. */
static void nccl_tests_json(void)
{
    char var[] = "NCCL_IB_DISABLE=1" BAD;
    char *envp[] = {var, NULL};
    char *argv[] = {"allreduce_bw", NULL};
    ar_nt_config cfg = {.program = "allreduce_bw"};
    json_t *doc = ar_nt_json_new(&cfg, 1, argv, envp);
    json_t *env = json_object_get(doc, "env");
    CHECKF(json_array_size(env) == 1, "the environment entry kept (%zu)", json_array_size(env));
    CHECK_STR(json_string_value(json_array_get(env, 0)), "NCCL_IB_DISABLE=1\\xFF");
    json_decref(doc);
    ar_nt_device d = {.rank = 0, .device = 0};
    snprintf(d.host, sizeof d.host, "node" BAD);
    snprintf(d.name, sizeof d.name, "H100" BAD);
    json_t *devs = ar_nt_json_devices(&d, 1);
    CHECKF(json_array_size(devs) == 1 && json_array_get(devs, 0), "the device kept");
    CHECK_STR(text_at(json_array_get(devs, 0), "hostname"), "node\\xFF");
    CHECK_STR(text_at(json_array_get(devs, 0), "device_info"), "H100\\xFF");
    json_decref(devs);
}

int main(void)
{
    gemm_record();
    mem_record();
    ddp_conditions();
    nccl_tests_json();
    return ga_test_finish();
}
