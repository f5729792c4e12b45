/* The node-name rule (node_name.h): what a name must be before it reaches a file name, a command line, a
 * scheduler or a page. Pure. */
#include "node_name.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

/* "all" in any case: scontrol's NodeName=ALL names every node of the cluster (issue 45, item 1), and
 * kubectl's --all is one dash away. */
static bool names_every_node(const char *s, size_t len)
{
    return len == 3 && strncasecmp(s, "all", 3) == 0;
}

bool suite_node_name_ok_n(const char *s, size_t len)
{
    if (!s || len == 0 || len > SUITE_NODE_NAME_MAX || !isalnum((unsigned char)s[0]) ||
        names_every_node(s, len))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80 || !(isalnum(c) || c == '.' || c == '-' || c == '_'))
            return false;
    }
    return true;
}

bool suite_node_name_ok(const char *s)
{
    return s && suite_node_name_ok_n(s, strlen(s));
}

bool suite_node_name_is_address(const char *s)
{
    unsigned char buf[16];
    return s && (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1);
}
