#include "ga_transport_capture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"

#define OPEN_MAX_COMMS 8

typedef struct {
    char label[96];
    ga_nccl_log_comm log;
} open_comm;

/* One rank's capture: the file, how far it was read, the communicators alive. */
static struct {
    bool prepared, ours, echo_info;
    char path[1024];
    char dir[1024]; /* our private directory, removed at the end ('\0': none) */
    long read_upto;
    ga_nccl_log_process proc;
    open_comm open[OPEN_MAX_COMMS];
    int n_open;
    ga_transport_rec rec;
} cap;

/* NCCL_DEBUG_SUBSYS with INIT, NET and GRAPH in it: the user's list plus ours ("^..." excludes, and is left
 * alone: what it keeps is the user's choice, and what goes missing shows as an unread communicator). */
static void set_subsys(void)
{
    const char *have = getenv("NCCL_DEBUG_SUBSYS");
    char v[512];
    if (!have || !*have)
        snprintf(v, sizeof v, "INIT,NET,GRAPH");
    else if (have[0] == '^' || strcasecmp(have, "ALL") == 0)
        return;
    else
        snprintf(v, sizeof v, "%.400s,INIT,NET,GRAPH", have);
    setenv("NCCL_DEBUG_SUBSYS", v, 1);
}

#define PRIVATE_DIR_PREFIX "gpuaccept-nccl."
#define DEBUG_FILE_NAME "nccl.log"

/* The private directories that processes of this user on this host left when killed before their end
 * (PRIVATE_DIR_PREFIX<host>.<pid>.XXXXXX of a pid that is gone), removed with their debug file: only a
 * directory of our own uid, opened without following a symlink. */
static void remove_dead_dirs(const char *tmp, const char *host)
{
    char prefix[128];
    int pl = snprintf(prefix, sizeof prefix, PRIVATE_DIR_PREFIX "%.64s.", host);
    DIR *d = opendir(tmp);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end = NULL;
        long pid = strncmp(e->d_name, prefix, (size_t)pl) == 0 ? strtol(e->d_name + pl, &end, 10) : 0;
        if (pid <= 0 || *end != '.' || strlen(end + 1) != 6 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid()) {
            unlinkat(fd, DEBUG_FILE_NAME, 0);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        }
        if (fd >= 0)
            close(fd);
    }
    if (d)
        closedir(d);
}

/* NCCL_DEBUG_FILE for a directory of this process's own: '%' doubled (NCCL expands %h, %p and %%), and no %h
 * or %p of ours, since nothing else writes there. */
static int escaped_debug_file(const char *dir, char *out, size_t len)
{
    size_t n = 0;
    for (const char *c = dir; *c; c++) {
        if (n + 3 >= len)
            return -1;
        out[n++] = *c;
        if (*c == '%')
            out[n++] = '%';
    }
    out[n] = '\0';
    return (size_t)snprintf(out + n, len - n, "/" DEBUG_FILE_NAME) < len - n ? 0 : -1;
}

/* Our debug file: in a directory made for this process alone (mkdtemp, mode 0700) under $TMPDIR, so that no
 * other user can plant a FIFO or a symlink where NCCL writes (it follows symlinks) and we read (issue 45,
 * item 3); named by host and pid so that a later run can remove it if this process is killed. Returns the
 * pattern for NCCL_DEBUG_FILE, or -1 with the reason in the record. */
static int private_debug_file(const char *host, char *pattern, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    char short_host[65];
    snprintf(short_host, sizeof short_host, "%.*s", (int)strcspn(host, "./"), host);
    remove_dead_dirs(tmp, short_host);
    int n = snprintf(cap.dir, sizeof cap.dir, "%s/" PRIVATE_DIR_PREFIX "%s.%ld.XXXXXX", tmp, short_host,
                     (long)getpid());
    const char *why = n < 0 || (size_t)n >= sizeof cap.dir ? "$TMPDIR is too long" : NULL;
    if (!why && !mkdtemp(cap.dir))
        why = strerror(errno);
    if (!why && escaped_debug_file(cap.dir, pattern, len) != 0) {
        rmdir(cap.dir);
        why = "$TMPDIR is too long";
    }
    if (why) {
        cap.dir[0] = '\0';
        cap.rec.log_state = GA_TR_LOG_UNREADABLE;
        snprintf(cap.rec.log_why, sizeof cap.rec.log_why,
                 "no private directory for NCCL's debug file in $TMPDIR: %s", why);
        return -1;
    }
    return 0;
}

/* Where this rank's debug file is: the user's NCCL_DEBUG_FILE, else ours in a private directory. */
static void prepare(void)
{
    cap.prepared = true;
    cap.rec.log_state = GA_TR_LOG_READ;
    ga_nccl_log_process_init(&cap.proc);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *level = getenv("NCCL_DEBUG"), *user_file = getenv("NCCL_DEBUG_FILE");
    bool user_info = level && (strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0);
    char pattern[1024];
    if (user_file && *user_file) {
        snprintf(pattern, sizeof pattern, "%s", user_file);
        if (!strstr(pattern, "%p")) {
            cap.rec.log_state = GA_TR_LOG_UNREADABLE;
            snprintf(cap.rec.log_why, sizeof cap.rec.log_why,
                     "NCCL_DEBUG_FILE has no %%p: the ranks of a node would share one file");
        }
    } else if (private_debug_file(host, pattern, sizeof pattern) == 0) {
        setenv("NCCL_DEBUG_FILE", pattern, 1);
        cap.ours = true;
        cap.echo_info = user_info; /* the user asked for NCCL's INFO on stdout */
    } else {
        return; /* NCCL's output left as the user set it: INFO on stdout would be noise */
    }
    if (!user_info)
        setenv("NCCL_DEBUG", "INFO", 1);
    set_subsys();
    if (ga_nccl_debug_file_expand(pattern, host, (long)getpid(), cap.path, sizeof cap.path) != 0) {
        cap.rec.log_state = GA_TR_LOG_UNREADABLE;
        snprintf(cap.rec.log_why, sizeof cap.rec.log_why, "NCCL_DEBUG_FILE is too long");
    }
    snprintf(cap.rec.log_path, sizeof cap.rec.log_path, "%.159s", cap.path);
}

static void not_regular(void)
{
    cap.rec.log_state = GA_TR_LOG_UNREADABLE;
    snprintf(cap.rec.log_why, sizeof cap.rec.log_why, "NCCL's debug file is not a regular file: not read");
}

/* The debug file opened for reading once NCCL has made it, and only if it is a regular file: no symlink is
 * followed and a FIFO does not block (NULL: not there yet, or the reason is in the record). */
static FILE *open_debug_file(void)
{
    int fd = open(cap.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP) /* a symlink: never ours, and never followed */
            not_regular();
        return NULL; /* otherwise nothing written yet; a file that never appears is judged at the end */
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        not_regular();
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

/* Reads the lines written since the last read into every communicator alive. */
static void drain(void)
{
    if (cap.rec.log_state == GA_TR_LOG_UNREADABLE)
        return;
    FILE *f = open_debug_file();
    if (!f)
        return;
    if (fseek(f, cap.read_upto, SEEK_SET) != 0) {
        fclose(f);
        return;
    }
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (n && line[n - 1] != '\n' && !feof(f)) {
            /* longer than the buffer: NCCL's lines are at most 1 KiB, so skip the rest of it */
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
        } else if (n && line[n - 1] != '\n') {
            break; /* being written: read it next time */
        }
        cap.read_upto = ftell(f);
        int warns = cap.proc.warn_lines;
        ga_nccl_log_comm *alive[OPEN_MAX_COMMS];
        for (int i = 0; i < cap.n_open; i++)
            alive[i] = &cap.open[i].log;
        ga_nccl_log_line(&cap.proc, alive, cap.n_open, line);
        if (cap.proc.warn_lines > warns || cap.echo_info)
            fputs(line, cap.proc.warn_lines > warns ? stderr : stdout);
    }
    fclose(f);
}

void ga_nccl_debug_comm_begin(const char *label)
{
    if (!cap.prepared)
        prepare();
    drain();
    if (cap.n_open == OPEN_MAX_COMMS)
        return; /* recorded as a communicator the log said nothing about */
    open_comm *c = &cap.open[cap.n_open++];
    snprintf(c->label, sizeof c->label, "%s", label);
    ga_nccl_log_comm_init(&c->log);
}

static void close_comm(int i)
{
    ga_transport_add_comm(&cap.rec, cap.open[i].label, &cap.proc, &cap.open[i].log);
    cap.open[i] = cap.open[--cap.n_open];
}

void ga_nccl_debug_comm_end(const char *label)
{
    if (!cap.prepared)
        return;
    drain();
    for (int i = 0; i < cap.n_open; i++)
        if (strcmp(cap.open[i].label, label) == 0) {
            close_comm(i);
            return;
        }
}

const ga_transport_scope *ga_transport_scope_mine(int scope)
{
    return &cap.rec.scope[scope >= 0 && scope < GA_TR_SCOPES ? scope : GA_TR_OTHER];
}

/* The NCCL part of this rank's record, every communicator closed. */
static void finish_nccl(void)
{
    if (!cap.prepared)
        return;
    drain();
    while (cap.n_open > 0)
        close_comm(0);
    if (cap.rec.log_state == GA_TR_LOG_READ && access(cap.path, R_OK) != 0) {
        cap.rec.log_state = GA_TR_LOG_UNREADABLE;
        snprintf(
            cap.rec.log_why, sizeof cap.rec.log_why,
            "NCCL wrote no debug file (%s): its debug output was set up before gpuaccept could direct it",
            strerror(errno));
    }
    cap.rec.warn_lines = cap.proc.warn_lines;
    ga_nccl_debug_abandon();
}

void ga_nccl_debug_abandon(void)
{
    if (cap.ours)
        unlink(cap.path);
    if (cap.dir[0])
        rmdir(cap.dir);
    cap.ours = false;
    cap.dir[0] = '\0';
}

/* Open MPI's components in use: the MPI_T categories of the PML and BTL frameworks still valid. */
static void mpi_components(ga_transport_rec *r)
{
    int provided, n = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    if (MPI_T_category_get_num(&n) == MPI_SUCCESS && n > 0) {
        char(*names)[128] = calloc((size_t)n, sizeof *names);
        const char **ptrs = calloc((size_t)n, sizeof *ptrs);
        int got = 0;
        for (int i = 0; names && ptrs && i < n; i++) {
            char desc[8];
            int nl = sizeof names[0], dl = sizeof desc, nc, np, ncat;
            if (MPI_T_category_get_info(i, names[got], &nl, desc, &dl, &nc, &np, &ncat) == MPI_SUCCESS)
                ptrs[got] = names[got], got++;
        }
        ga_transport_mpi_components(r, ptrs, got);
        free(names);
        free(ptrs);
    }
    MPI_T_finalize();
}

json_t *ga_transport_collect(const ga_ctx *ctx, const ga_transport_policy *pol, ga_findings *f)
{
    ga_transport_record *mine = calloc(1, sizeof *mine), *all = NULL;
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    finish_nccl();
    mine->tr = cap.rec;
    ga_transport_forced_from_env(&mine->tr, ga_process_getenv);
    mpi_components(&mine->tr);
    ga_record_header_init(ctx, &mine->hdr);
    ga_deadline_arm("gathering the transport records");
    ga_gather_records(ctx, mine, sizeof *mine, (void **)&all);
    ga_deadline_disarm();
    free(mine);
    if (ctx->world_rank != 0)
        return NULL;
    json_t *out = ga_transport_analyse(all, ctx->world_size, pol, f);
    free(all);
    if (!out)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    return out;
}
