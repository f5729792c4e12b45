#include "ga_pci.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run of hex digits at *p, at most max of them, at least one; advances *p. -1 when there is none. */
static long hex_field(const char **p, int max)
{
    const char *s = *p;
    int n = 0;
    while (isxdigit((unsigned char)s[n]) && n <= max)
        n++;
    if (n == 0 || n > max)
        return -1;
    long v = strtol(s, NULL, 16);
    *p = s + n;
    return v;
}

int ga_pci_normalise(const char *in, char *out, size_t len)
{
    char buf[GA_PCI_BUS_ID_LEN];
    if (len)
        out[0] = '\0';
    if (!in)
        return -1;
    const char *p = in;
    while (isspace((unsigned char)*p))
        p++;
    /* Three colon-separated hex fields before the dot have a domain; two do not (domain 0, as lspci). */
    long f[3];
    int nf = 0;
    for (;;) {
        long v = hex_field(&p, 8);
        if (v < 0 || nf == 3)
            return -1;
        f[nf++] = v;
        if (*p != ':')
            break;
        p++;
    }
    if (nf < 2 || *p++ != '.')
        return -1;
    long dom = nf == 3 ? f[0] : 0, bus = f[nf - 2], dev = f[nf - 1];
    long fn = hex_field(&p, 1);
    while (isspace((unsigned char)*p))
        p++;
    /* PCI: 16-bit segment (domain), 8-bit bus, 5-bit device, 3-bit function. */
    if (fn < 0 || fn > 7 || *p || dom > 0xffff || bus > 0xff || dev > 0x1f)
        return -1;
    snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
    if (strlen(buf) + 1 > len)
        return -1;
    memcpy(out, buf, strlen(buf) + 1);
    return 0;
}

bool ga_pci_same(const char *a, const char *b)
{
    char x[GA_PCI_BUS_ID_LEN], y[GA_PCI_BUS_ID_LEN];
    return ga_pci_normalise(a, x, sizeof x) == 0 && ga_pci_normalise(b, y, sizeof y) == 0 &&
           strcmp(x, y) == 0;
}
