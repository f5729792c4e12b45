/* What gemm_flops and mem_bw share for their command lines and reports. */
#ifndef GA_DEVREPORT_H
#define GA_DEVREPORT_H

#include <jansson.h>

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_backend.h"
#include "ga_record.h"
#include "ga_devflag.h"

/* The options of device flagging that gemm_flops and mem_bw share: their table entries (what names the unit
 * a remeasurement repeats: "a dtype", "a test") and their handler over the program's own fields. Keys from
 * GA_DEVFLAG_KEY_BASE, above any program key. */
enum {
    GA_DEVFLAG_KEY_BASE = 4096,
    GA_DEVFLAG_OPT_TOLERANCE = GA_DEVFLAG_KEY_BASE,
    GA_DEVFLAG_OPT_REMEASURE,
    GA_DEVFLAG_OPT_RELATIVE,
    GA_DEVFLAG_OPT_THREADS
};
#define GA_DEVFLAG_OPTIONS(unit)                                                                             \
    {"tolerance",                                                                                            \
     GA_DEVFLAG_OPT_TOLERANCE,                                                                               \
     true,                                                                                                   \
     "PCT",                                                                                                  \
     "flag a GPU more than PCT percent below its model's median and beyond its peers' noise (default 10)",   \
     GA_OPT_PCT,                                                                                             \
     "%"},                                                                                                   \
        {"remeasure",                                                                                        \
         GA_DEVFLAG_OPT_REMEASURE,                                                                           \
         true,                                                                                               \
         "N",                                                                                                \
         "measure " unit " with a suspect GPU again, up to N times on every rank, best kept (default 2, 0: " \
         "never)",                                                                                           \
         GA_OPT_INT},                                                                                        \
    {                                                                                                        \
        "relative", GA_DEVFLAG_OPT_RELATIVE, true, "fail|warn",                                              \
            "a GPU below its peers fails the run, or is a warning (default fail; the quick profile warns)",  \
            GA_OPT_ENUM, .choices = "fail|warn"                                                              \
    }

/* Where a program keeps what those options set. threads: its --threads (host path), GA_DEVFLAG_OPT_THREADS.
 */
typedef struct {
    double *tolerance; /* a fraction: the option is in percent */
    int *remeasure;
    bool *relative_warn;
    int *threads;
} ga_devflag_fields;

/* Whether key is one of those options; when it is, *rc is 0, or -1 with a one-line message in err. */
bool ga_devflag_on_option(const ga_devflag_fields *f, int key, const char *arg, int *rc, char *err,
                          size_t errlen);

/* Parses a --dtype style list ("fp32,bf16" or "all") into a bit mask of ga_dtype; 0, or -1 with a message. */
int ga_dtype_parse_list(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen);

/* Indices of n gathered records (each starting with a ga_record_header) in device order: node, then GPU
 * index, then rank. */
void ga_dev_record_order(const void *records, int n, size_t record_size, int *idx);

/* "<name>: median X <unit> over N GPUs, peak P" under tag, when anything was measured. */
void ga_dev_figure_log(const ga_dev_figure *fig, const char *tag);

/* The figure as a per-device headline of report (its median, against the peak when known). label: what a
 * person reads ("bf16"). */
void ga_dev_figure_headline(json_t *report, const ga_dev_figure *fig, bool higher_is_better);

#endif
