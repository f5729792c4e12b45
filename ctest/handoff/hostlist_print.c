/* Prints suite_hostlist_compress of its arguments: the deployment test holds it to scontrol. */
#include <stdio.h>
#include <stdlib.h>

#include "handoff.h"

int main(int argc, char **argv)
{
    char *s = suite_hostlist_compress((const char *const *)argv + 1, (size_t)(argc - 1));
    if (!s)
        return 1;
    printf("%s\n", s);
    free(s);
    return 0;
}
