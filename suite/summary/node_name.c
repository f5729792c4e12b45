#include "node_name.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>

bool suite_node_name_ok_n(const char *s, size_t len)
{
    if (!s || len == 0 || len > SUITE_NODE_NAME_MAX || !isalnum((unsigned char)s[0]))
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
