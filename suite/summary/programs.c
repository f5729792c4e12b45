#include "programs.h"

#include <jansson.h>
#include <string.h>

/* One entry per program; render.py reads the names from this file (`.name = "..."`, in this order) because
 * it runs where nothing is built; ctest suite.programs_registry holds it to the binary's list. */
const suite_program suite_programs[] = {
    {.name = "node_health",
     .fault_prefixes = "HEALTH",
     .headline = "GPUs checked, IB ports active, failed health checks and warnings",
     .purpose =
         "per node and GPU: ECC, row remaps, Xids, PCIe, NVLink, throttling, IB ports, GPUDirect RDMA"},
    {.name = "env_audit",
     .fault_prefixes = "ENV,GPU",
     .headline = "nodes that deviate from the majority, per field",
     .purpose = "software stack, GPUs, NICs and topology of every rank; which nodes deviate"},
    {.name = "gemm_flops",
     .fault_prefixes = "GEMM",
     .headline = "TFLOP/s per GPU and dtype, against its model's median and datasheet peak",
     .purpose = "cuBLAS/cuBLASLt GEMM throughput per GPU; burn mode with throttling and corruption checks"},
    {.name = "mem_bw",
     .fault_prefixes = "MEM",
     .headline = "GB/s per GPU and test (HBM copy, read-write, host-to-device, device-to-host)",
     .purpose = "memory bandwidth of every GPU and its host link, against peak"},
    {.name = "allreduce_bw",
     .fault_prefixes = "COMM",
     .headline = "busbw at the largest size and averaged over sizes; slow pairs with --pattern pairs",
     .purpose = "NCCL collective bandwidth sweep with an exact correctness check; names a slow node or link"},
    {.name = "ddp_smoke",
     .fault_prefixes = "DDP",
     .headline = "loss start and end, samples/s, step time, replicas identical",
     .purpose = "a data-parallel training loop: the loss must fall and the replicas must agree"},
};
const size_t suite_n_programs = sizeof suite_programs / sizeof suite_programs[0];
_Static_assert(sizeof suite_programs / sizeof suite_programs[0] <= SUITE_MAX_PROGRAMS, "SUITE_MAX_PROGRAMS");

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
