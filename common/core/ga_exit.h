/* Exit codes shared by every gpuaccept program (documented in docs/exit-codes.md). */
#ifndef GA_EXIT_H
#define GA_EXIT_H

enum ga_exit_code {
    GA_EXIT_PASS = 0,         /* every check passed */
    GA_EXIT_CHECK_FAILED = 1, /* measured, and a check failed: the cluster is not fit */
    GA_EXIT_USAGE = 2,        /* bad command line or unusable --report-dir */
    GA_EXIT_ENV = 3,          /* the environment prevents measuring (GPU binding, launcher, library) */
    GA_EXIT_TIMEOUT = 4,      /* a phase exceeded its time limit; the job was aborted */
    GA_EXIT_INTERNAL = 5,     /* a bug or an unexpected library failure */
};

const char *ga_exit_code_name(int code);

#endif
