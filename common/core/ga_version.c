#include "ga_version.h"

/* GA_VERSION comes from the build (common/CMakeLists.txt) for this file alone. */
const char *ga_version(void)
{
    return GA_VERSION;
}
