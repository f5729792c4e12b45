/* LD_PRELOAD test shim: stops one rank inside MPI start-up, as a SIGSTOP or a node that hangs would, to show
 * that the watchdog bounds the start-up too (common.startup_stop, issue 27). Environment:
 *   GA_TEST_STOP_RANK  the rank (OMPI_COMM_WORLD_RANK) to stop; no other is touched
 *   GA_TEST_STOP_WHEN  before: inside MPI_Init_thread before MPI's own start-up (the others wait in theirs);
 *                      after: once MPI is up, before MPI_Init_thread returns (the others wait in ga_init's
 *                      first collectives) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

typedef int (*init_thread_fn)(int *, char ***, int, int *);

static int chosen(const char *when)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK"), *want = getenv("GA_TEST_STOP_RANK");
    const char *at = getenv("GA_TEST_STOP_WHEN");
    return rank && want && strcmp(rank, want) == 0 && strcmp(at ? at : "before", when) == 0;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (chosen("before"))
        raise(SIGSTOP);
    init_thread_fn real = (init_thread_fn)dlsym(RTLD_NEXT, "MPI_Init_thread");
    int rc = real ? real(argc, argv, required, provided) : 1;
    if (chosen("after"))
        raise(SIGSTOP);
    return rc;
}
