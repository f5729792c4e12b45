#include "escape.h"

#include <stdint.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (1..4), 0 when the bytes there are not one (a stray
 * continuation byte, an overlong form, a surrogate, a code point beyond U+10FFFF, a sequence cut short). */
static size_t utf8_len(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4)
        return 0;
    uint32_t v = s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < least[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* Appends the UTF-8 form of cp (a BMP code point). */
static void put_cp(sbuf *b, uint32_t cp)
{
    char u[4];
    u[0] = (char)(0xe0 | cp >> 12);
    u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    u[2] = (char)(0x80 | (cp & 0x3f));
    u[3] = '\0';
    sbuf_puts(b, u);
}

/* What a character that must not reach a page raw becomes: blanks a space, a C0 control or DEL its picture
 * (U+2400 + c, U+2421: an ESC from a saved `dmesg --color` shows as a visible mark), a C1 control or a byte
 * that is not UTF-8 the replacement character. Returns false for a character that may pass. */
static bool neutralise(sbuf *b, uint32_t cp, bool valid, bool keep_newline)
{
    if (!valid || (cp >= 0x80 && cp <= 0x9f))
        put_cp(b, 0xfffd);
    else if (cp == '\n' && keep_newline)
        return false;
    else if (cp == '\t' || cp == '\r' || cp == '\n')
        sbuf_puts(b, " ");
    else if (cp < 0x20)
        put_cp(b, 0x2400 + cp);
    else if (cp == 0x7f)
        put_cp(b, 0x2421);
    else
        return false;
    return true;
}

/* Walks s one character at a time: each is neutralised, or handed to quote (NULL: written as is), which
 * writes it and returns true, or returns false to have it written as is. */
static void walk(sbuf *b, const char *s, bool keep_newline, bool (*quote)(sbuf *, char))
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint32_t cp = 0;
        size_t n = utf8_len(p, &cp);
        if (neutralise(b, cp, n > 0, keep_newline)) {
            p += n ? n : 1;
            continue;
        }
        if (n == 1 && quote && quote(b, (char)*p)) {
            p++;
            continue;
        }
        char one[5] = {0};
        memcpy(one, p, n);
        sbuf_puts(b, one);
        p += n;
    }
}

static bool html_quote(sbuf *b, char c)
{
    const char *e = c == '&'    ? "&amp;"
                    : c == '<'  ? "&lt;"
                    : c == '>'  ? "&gt;"
                    : c == '"'  ? "&quot;"
                    : c == '\'' ? "&#39;"
                                : NULL;
    if (e)
        sbuf_puts(b, e);
    return e != NULL;
}

/* The characters that can open Markdown markup that changes what a line is or does mid-line: code spans,
 * links and images, raw HTML, entities, table cells. Each gets a backslash, which CommonMark allows before
 * any ASCII punctuation and which then shows the character itself. Emphasis (* _ ~) is left alone: it only
 * changes a font, and gemm_flops or mlx5_0 stay readable in the raw file. */
static bool md_quote(sbuf *b, char c)
{
    if (!strchr("\\`[]<>&|", c))
        return false;
    char e[3] = {'\\', c, '\0'};
    sbuf_puts(b, e);
    return true;
}

void sbuf_html(sbuf *b, const char *s)
{
    walk(b, s, true, html_quote);
}

void sbuf_md(sbuf *b, const char *s)
{
    walk(b, s, false, md_quote);
}

void sbuf_md_code(sbuf *b, const char *s)
{
    /* Inside a code span nothing is markup, but a backtick ends it and a GFM table splits it at '|': only an
     * identifier (a fault code, a host list) goes in one; anything else is written as escaped text. */
    const char *t = s ? s : "";
    if (*t &&
        strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:[]-") == strlen(t)) {
        sbuf_puts(b, "`");
        sbuf_puts(b, t);
        sbuf_puts(b, "`");
    } else {
        sbuf_md(b, t);
    }
}
