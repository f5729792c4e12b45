/* Private session directories for concurrent mpiruns (mpirun_session.h says why). */
#include "mpirun_session.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Where the private directories go: a base the operator chose for Open MPI's session trees stays theirs. */
static const char *session_parent(void)
{
    static const char *const vars[] = {SUITE_MPIRUN_SESSION_VAR_ORTE, "OMPI_MCA_orte_tmpdir_base", "TMPDIR"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0] == '/')
            return v;
    }
    return "/tmp";
}

int suite_mpirun_session_make(char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "%s/gpuaccept-mpirun.XXXXXX", session_parent());
    if (n < 0 || (size_t)n >= outlen || !mkdtemp(out)) {
        if (outlen)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

void suite_mpirun_session_use(const char *dir)
{
    if (!dir || !dir[0])
        return;
    setenv(SUITE_MPIRUN_SESSION_VAR_ORTE, dir, 1);
    setenv(SUITE_MPIRUN_SESSION_VAR_PRRTE, dir, 1);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void suite_mpirun_session_remove(const char *dir)
{
    if (dir && dir[0])
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
