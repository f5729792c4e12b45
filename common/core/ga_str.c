#include "ga_str.h"

#include <string.h>

bool ga_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}
