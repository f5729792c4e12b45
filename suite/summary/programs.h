/* The programs of the suite: the one table that names them, in the order `gpuaccept run` runs them. The
 * front-end's help, step list and errors, the merge's program order, and (through `gpuaccept run
 * --list-programs`) the tests and deployment scripts all read it; adding a program touches its own folder,
 * this table and its docs. */
#ifndef PROGRAMS_H
#define PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *name;           /* the executable, and its report <name>.json */
    const char *fault_prefixes; /* of the fault codes its findings carry, comma separated: "ENV,GPU" */
    const char *headline;       /* its headline figures, in words */
    const char *purpose;        /* what it tells, one line */
    bool trains; /* a training loop that fills the time it is given (train_cut.h: cut after a slow fabric) */
} suite_program;

/* The most programs the table may hold (a bound for fixed arrays of flags, checked where it is defined). */
#define SUITE_MAX_PROGRAMS 32

/* In run order. Cheap, node-local checks first, so a broken software stack shows before the long runs. */
extern const suite_program suite_programs[];
extern const size_t suite_n_programs;

int suite_program_index(const char *name); /* -1 if not a suite program */

/* The names in run order, separated by sep, into buf (truncated to len). */
void suite_program_names(const char *sep, char *buf, size_t len);

typedef enum { SUITE_LIST_TSV, SUITE_LIST_JSON } suite_list_format;

/* Prints the table for scripts (docs/suite.md, "The program registry"). TSV: one program per line, columns
 * order (from 1), name, fault prefixes, docs page, headline, purpose, separated by one tab. JSON: an array
 * of objects with those keys. Returns 0, or -1 if writing failed. */
int suite_programs_print(FILE *out, suite_list_format format);

#endif
