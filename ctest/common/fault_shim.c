/* LD_PRELOAD test shim: one rank fails at a chosen point of a program's life, as a SIGSTOP, a node that hangs
 * or a kill would, for the tests of issue 27. Only the rank named (OMPI_COMM_WORLD_RANK) is touched.
 *   GA_TEST_STOP_RANK, GA_TEST_STOP_WHEN  stops the rank inside MPI_Init_thread: before MPI's own start-up
 *       (the others wait in theirs) or after it, before MPI_Init_thread returns (the others wait in ga_init's
 *       first collectives): common.startup_stop_*.
 *   GA_TEST_KILL_AT_END_RANK  kills the rank (SIGKILL) as it enters the final agreement on the exit code (the
 *       MPI_Allreduce of 3 ints, MPI_MAX, of ga_program_end), after rank 0 has written its report:
 *       suite.inputs.leftovers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int this_rank(const char *var)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK"), *want = getenv(var);
    return rank && want && strcmp(rank, want) == 0;
}

static int stop_now(const char *when)
{
    const char *at = getenv("GA_TEST_STOP_WHEN");
    return this_rank("GA_TEST_STOP_RANK") && strcmp(at ? at : "before", when) == 0;
}

typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (stop_now("before"))
        raise(SIGSTOP);
    init_thread_fn real = (init_thread_fn)dlsym(RTLD_NEXT, "MPI_Init_thread");
    int rc = real ? real(argc, argv, required, provided) : MPI_ERR_OTHER;
    if (stop_now("after"))
        raise(SIGSTOP);
    return rc;
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (count == 3 && type == MPI_INT && op == MPI_MAX && this_rank("GA_TEST_KILL_AT_END_RANK"))
        raise(SIGKILL);
    allreduce_fn real = (allreduce_fn)dlsym(RTLD_NEXT, "MPI_Allreduce");
    return real ? real(send, recv, count, type, op, comm) : MPI_ERR_OTHER;
}
