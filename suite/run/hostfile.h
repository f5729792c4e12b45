/* An Open MPI hostfile as gpuaccept run reads it before launching anything: one host per line, an optional
 * "slots=N", '#' comments. Read to refuse bad input early (an empty file, a host that does not resolve, more
 * ranks than slots) and to give the per-node preflight its nodes. */
#ifndef HOSTFILE_H
#define HOSTFILE_H

#include <stdbool.h>
#include <stddef.h>

#define SUITE_HOSTS_MAX 4096

typedef struct {
    char name[128];
    int slots;      /* 0: not given (Open MPI then counts the node's cores) */
    char line[256]; /* the line as written, for the hostfile of the nodes that passed */
} suite_host;

typedef struct {
    size_t n;
    suite_host host[SUITE_HOSTS_MAX];
} suite_hostlist;

/* Reads path into out. 0, or -1 with a one-line message (unreadable, a line too long, a bad slots=). */
int suite_hostfile_read(const char *path, suite_hostlist *out, char *err, size_t errlen);

/* Slots of every host together, -1 when some host gives none. */
long suite_hostlist_slots(const suite_hostlist *hosts);

/* The checks before anything is launched. Returns 0, else an exit code with one line in err: 2 (usage) for
 * an empty hostfile or np larger than the slots, 3 (environment) for a host name that does not resolve. */
int suite_hostfile_validate(const char *path, long np, suite_hostlist *out, char *err, size_t errlen);

/* Writes the hosts whose keep[i] is true, each line as it was read. 0, or -1 with a message. */
int suite_hostfile_write(const char *path, const suite_hostlist *hosts, const bool *keep, char *err,
                         size_t errlen);

#endif
