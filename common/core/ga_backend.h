/* Which path a program measures on: the GPU one, or the host one beside it. The names and their parsing are
 * pure (the option parsers of the analyses use them); deciding for the whole job is ga_backend_resolve in
 * ga_gpu. */
#ifndef GA_BACKEND_H
#define GA_BACKEND_H

#include <stddef.h>

typedef enum { GA_BACKEND_AUTO, GA_BACKEND_GPU, GA_BACKEND_HOST } ga_backend;
const char *ga_backend_name(ga_backend b);
/* --backend / --device values: auto; gpu or nccl; host, cpu or mpi. 0, or -1 with a message. */
int ga_parse_backend(const char *arg, ga_backend *out, char *err, size_t errlen);

#endif
