#include "ga_exit.h"

const char *ga_exit_code_name(int code)
{
    switch (code) {
    case GA_EXIT_PASS:
        return "pass";
    case GA_EXIT_CHECK_FAILED:
        return "check_failed";
    case GA_EXIT_USAGE:
        return "usage_error";
    case GA_EXIT_ENV:
        return "environment_error";
    case GA_EXIT_TIMEOUT:
        return "timeout";
    default:
        return "internal_error";
    }
}
