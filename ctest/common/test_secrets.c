/* The secret filter against a corpus of real key shapes (ctest/common/data/secrets/corpus.tsv): every
 * credential hidden, every ordinary value a report needs kept as it is. Usage: test_secrets CORPUS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_envvars.h"
#include "ga_test.h"

#define MIN_SHAPES 30 /* issue 27: at least 30 key shapes */

typedef struct {
    char value[8192];
    int calls;
} seen;

static void keep_value(const char *name, const char *value, void *user)
{
    (void)name;
    seen *s = user;
    snprintf(s->value, sizeof s->value, "%s", value);
    s->calls++;
}

/* "\n" in the corpus is a newline. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++)
        if (s[0] == '\\' && s[1] == 'n') {
            *o++ = '\n';
            s++;
        } else {
            *o++ = *s;
        }
    *o = '\0';
}

/* One case: NAME=VALUE through the collector, as env_audit and allreduce_bw -J record it. */
static void one_case(int lineno, char *kind, char *name, char *value, const char *hidden, int *shapes)
{
    char var[8400];
    unescape(value);
    snprintf(var, sizeof var, "%s=%s", name, value);
    char *envp[] = {var, NULL};
    seen s = {"", 0};
    ga_envvars_collect(envp, keep_value, &s);
    CHECKF(s.calls == 1, "line %d: %s is not recorded at all (not an allowed name)", lineno, name);
    CHECKF(!ga_envvar_is_secret(name), "line %d: %s is a secret by its name: the case tests nothing", lineno,
           name);
    if (strcmp(kind, "whole") == 0) { /* a webhook URL or a key with a public id part (issue 45, item 8) */
        (*shapes)++;
        CHECKF(strcmp(s.value, GA_REDACTED) == 0, "line %d: %s=%s came out as %s (must be %s alone)", lineno,
               name, value, s.value, GA_REDACTED);
    } else if (strcmp(kind, "redact") == 0) {
        (*shapes)++;
        CHECKF(*hidden && !strstr(s.value, hidden) && strstr(s.value, GA_REDACTED),
               "line %d: %s=%s came out as %s (must hide %s)", lineno, name, value, s.value, hidden);
        CHECKF(ga_envvar_value_is_secret(value), "line %d: %s not seen as secret", lineno, value);
    } else {
        CHECKF(strcmp(kind, "keep") == 0, "line %d: kind %s is neither redact nor keep", lineno, kind);
        CHECKF(strcmp(s.value, value) == 0, "line %d: %s=%s came out as %s (must be kept)", lineno, name,
               value, s.value);
    }
}

/* Issue 45, item 5: a value (or a name) with bytes that are not UTF-8 is collected as valid UTF-8, each such
 * byte as \xHH, never dropped: env_audit's environment lost NCCL_IB_DISABLE=$'1\xff' before. */
static void test_not_utf8(void)
{
    char var[] = "NCCL_IB_DISABLE=1\xff", name[] = "NCCL_X\xc3=eth0";
    char *one[] = {var, NULL}, *two[] = {name, NULL};
    seen s = {"", 0};
    ga_envvars_collect(one, keep_value, &s);
    CHECKF(s.calls == 1 && strcmp(s.value, "1\\xFF") == 0, "%d calls, value %s", s.calls, s.value);
    ga_envvars_collect(two, keep_value, &s);
    CHECKF(s.calls == 2 && strcmp(s.value, "eth0") == 0, "a name that is not UTF-8: %d calls", s.calls);
}

int main(int argc, char **argv)
{
    test_not_utf8();
    if (argc != 2) {
        fprintf(stderr, "usage: test_secrets CORPUS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char line[9000];
    int lineno = 0, shapes = 0, cases = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        char *fields[4] = {NULL, NULL, NULL, ""};
        char *p = line;
        for (int i = 0; i < 4 && p; i++) {
            fields[i] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        CHECKF(fields[2] != NULL, "line %d: not KIND NAME VALUE [HIDDEN]", lineno);
        if (fields[2]) {
            one_case(lineno, fields[0], fields[1], fields[2], fields[3] ? fields[3] : "", &shapes);
            cases++;
        }
    }
    fclose(f);
    CHECKF(shapes >= MIN_SHAPES, "%d credentials in the corpus, fewer than %d", shapes, MIN_SHAPES);
    printf("%d cases, %d credentials\n", cases, shapes);
    return ga_test_finish();
}
