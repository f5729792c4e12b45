#include "ga_backend.h"

#include <stdio.h>
#include <string.h>

const char *ga_backend_name(ga_backend b)
{
    return b == GA_BACKEND_GPU ? "gpu" : b == GA_BACKEND_HOST ? "host" : "auto";
}

int ga_parse_backend(const char *arg, ga_backend *out, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        ga_backend b;
    } names[] = {{"auto", GA_BACKEND_AUTO}, {"gpu", GA_BACKEND_GPU},  {"nccl", GA_BACKEND_GPU},
                 {"host", GA_BACKEND_HOST}, {"cpu", GA_BACKEND_HOST}, {"mpi", GA_BACKEND_HOST}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(arg, names[i].name) == 0) {
            *out = names[i].b;
            return 0;
        }
    snprintf(err, errlen, "'%s' is not one of auto, gpu (or nccl), host (or cpu, mpi)", arg);
    return -1;
}
