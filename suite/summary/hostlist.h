/* Host lists the way Slurm writes them, for the drain script, the pages and the console. Pure. */
#ifndef HOSTLIST_H
#define HOSTLIST_H

#include <stddef.h>

/* hosts compressed the way Slurm writes them ("gpu-node-[02-03,17]"): sorted, a trailing number grouped
 * by prefix into ranges, zero padding kept. New string (free it), NULL when out of memory. */
char *suite_hostlist_compress(const char *const *hosts, size_t n);

#endif
