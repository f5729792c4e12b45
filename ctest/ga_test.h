/* A minimal assertion helper for the C unit tests: failures are counted and printed with file:line, and the
 * test prints one closing line "N passed, N failed". */
#ifndef GA_TEST_H
#define GA_TEST_H

#include <stdio.h>
#include <string.h>

static int ga_test_passed, ga_test_failed;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            ga_test_passed++;                                                                                \
        } else {                                                                                             \
            ga_test_failed++;                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                         \
        }                                                                                                    \
    } while (0)

/* CHECK with a printf-style explanation of what was expected. */
#define CHECKF(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            ga_test_passed++;                                                                                \
        } else {                                                                                             \
            ga_test_failed++;                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                         \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
        }                                                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                                                      \
    do {                                                                                                     \
        const char *ga_a_ = (a), *ga_b_ = (b);                                                               \
        if (ga_a_ && ga_b_ && strcmp(ga_a_, ga_b_) == 0) {                                                   \
            ga_test_passed++;                                                                                \
        } else {                                                                                             \
            ga_test_failed++;                                                                                \
            fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__, __LINE__, ga_a_ ? ga_a_ : "(null)",           \
                    ga_b_ ? ga_b_ : "(null)");                                                               \
        }                                                                                                    \
    } while (0)

static inline int ga_test_finish(void)
{
    printf("%d passed, %d failed\n", ga_test_passed, ga_test_failed);
    return ga_test_failed ? 1 : 0;
}

#endif
