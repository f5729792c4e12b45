/* A private session directory for each of several mpiruns started at once on this machine (the preflight's,
 * one per node). Open MPI 4's mpirun makes its session directory under one tree shared by every mpirun of the
 * user on the machine, and the last one out removes that tree's top while another may be creating its own
 * directory below it: the other then dies with "orte_session_dir failed / Returned value Error (-1) instead
 * of ORTE_SUCCESS" (orte/util/session_dir.c, orte_session_dir_finalize; open-mpi/ompi issue 3818 shows the
 * failed mkdir). Measured here: 17 of 1,600 concurrent one-rank mpiruns of a non-root user under load failed
 * so, none of 1,200 with a base of their own (docs/testing.md, "The preflight's mpiruns"). */
#ifndef SUITE_MPIRUN_SESSION_H
#define SUITE_MPIRUN_SESSION_H

#include <stddef.h>

/* The variables that set the base of mpirun's own (the launching machine's) session tree: Open MPI 4's ORTE
 * and Open MPI 5's PRRTE. Remote daemons keep their default (orte_remote_tmpdir_base is not set). */
#define SUITE_MPIRUN_SESSION_VAR_ORTE "OMPI_MCA_orte_local_tmpdir_base"
#define SUITE_MPIRUN_SESSION_VAR_PRRTE "PRTE_MCA_prte_local_tmpdir_base"

/* Makes a new private directory (mode 0700) for one mpirun under the base the environment gives (the
 * operator's own session base, else $TMPDIR, else /tmp) into out. 0, or -1 (out empty: mpirun keeps its
 * default). */
int suite_mpirun_session_make(char *out, size_t outlen);

/* In the child about to exec mpirun: points both variables at dir. */
void suite_mpirun_session_use(const char *dir);

/* Removes dir and whatever mpirun left in it, without following links; a no-op for "". */
void suite_mpirun_session_remove(const char *dir);

#endif
