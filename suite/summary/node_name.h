/* Host and node names, checked once where they enter the front-end: a report's nodes, findings and metrics,
 * a run record, a hostfile, Slurm's node list, a launcher's line naming a failed rank. What passes can go
 * into a file name (preflight/<host>.log), a command line (mpirun --host, srun -w, kubectl, scontrol) and a
 * page without further thought; the commands still get it after `--` where they take one. Pure. */
#ifndef NODE_NAME_H
#define NODE_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* The longest node name: a DNS name's 253 characters. */
#define SUITE_NODE_NAME_MAX 253

/* Whether the len characters at s are a node name: 1 to SUITE_NODE_NAME_MAX letters, digits, '.', '-' and
 * '_', starting with a letter or a digit (so never an option, a path or a hidden file), and not "all" in any
 * case (Slurm's name for every node). IPv4 addresses pass; IPv6 literals, user@host, whitespace, control
 * characters and Slurm host lists (brackets, commas, globs) do not. The one rule for every name that reaches
 * a scheduler or an orchestrator: a report's host, slurm_node and pod, and the hand-offs again (issue 45). */
bool suite_node_name_ok_n(const char *s, size_t len);
bool suite_node_name_ok(const char *s);

/* Whether a name is an IPv4 or IPv6 address (inet_pton's forms): a hostfile's entry, never a Slurm NodeName
 * as gpuaccept can know it, so drain.sh names no such node to scontrol (issue 41, item 8). */
bool suite_node_name_is_address(const char *s);

#endif
