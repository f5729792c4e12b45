#!/usr/bin/env python3
"""The renderers print untrusted text only through escape.h. Usage: check_sinks.py LAUNCH_DIR

In the files that write summary.html and summary.md, every string handed to sbuf_puts, and every argument of a
%s (or %c) in an sbuf_printf format, must be a string literal, a choice between literals (a ? "x" : "y"), or one
of the expressions below, each a constant of the code's own. Anything else (a host, a message, a label, a
buffer formatted from them) has to go through sbuf_html, sbuf_md or sbuf_md_code, which escape it and
neutralise control characters. Exit 0 clean, 1 with each offending call named."""
import os
import re
import sys

FILES = ("render_html.c", "render_md.c", "svg.c", "heatmap.c")
# Expressions that hold constants of the code itself, never text from a file (why, for each).
CONSTANT = {
    "svg_status_color(status)": "a colour of svg.c's table",
    "svg_status_color(st)": "a colour of svg.c's table",
    "svg_status_color(legend[i])": "a colour of svg.c's table",
    "bucket_colour(k)": "a colour of heatmap.c's table",
    "colour": "swatch(): called with heatmap.c's colour tables only",
    "s[i].color": "render_html.c's colors[] table",
    "bad": '"&minus;" or "+"',
    "good": '"&minus;" or "+"',
    "lab": "a number or a byte count formatted by svg.c (suite_format_bytes, %g)",
    "css": "render_html.c's style sheet literal",
    "order[o]": "the literals fail, warn, info",
    "render_item_word(values)": "the literals GPU or rank",
    "legend_text[i]": "svg.c's legend literals",
}
STRING = r'"(?:[^"\\]|\\.)*"'


def calls(text, name):
    """(line, [argument texts]) for every call of name, arguments split at top-level commas."""
    for m in re.finditer(r"\b%s\s*\(" % name, text):
        i, depth, args, cur = m.end(), 1, [], ""
        while depth:
            c = text[i]
            if c in "\"'":
                j = i + 1
                while text[j] != c:
                    j += 2 if text[j] == "\\" else 1
                cur += text[i : j + 1]
                i = j + 1
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    break
            if c == "," and depth == 1:
                args.append(cur.strip())
                cur = ""
            else:
                cur += c
            i += 1
        args.append(cur.strip())
        yield text.count("\n", 0, m.start()) + 1, [" ".join(a.split()) for a in args]


def is_literal(expr):
    return re.fullmatch(r"(?:%s\s*)+" % STRING, expr) is not None


def is_constant(expr):
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")"):
        expr = expr[1:-1].strip()
    if is_literal(expr) or expr in CONSTANT:
        return True
    # render_plural(n, "one", "many") returns one of its two literals (render_common.c)
    plural = re.fullmatch(r"render_plural\(.*, (%s), (%s)\)" % (STRING, STRING), expr)
    if plural:
        return True
    parts = split_conditional(expr)
    return parts is not None and is_constant(parts[1]) and is_constant(parts[2])


def split_conditional(expr):
    """cond ? a : b as (cond, a, b), splitting outside strings and brackets; None for another expression."""
    depth, q, i, pos = 0, None, 0, []
    while i < len(expr):
        c = expr[i]
        if c == '"':
            i = re.match(STRING, expr[i:]).end() + i
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == "?" and q is None:
            q = i
        elif depth == 0 and c == ":" and q is not None:
            pos.append(i)
        i += 1
    if q is None or not pos:
        return None
    colon = pos[0]  # nested conditionals sit in the last branch: a ? "x" : b ? "y" : "z"
    return expr[:q], expr[q + 1 : colon], expr[colon + 1 :]


def string_args(args):
    """The arguments of an sbuf_printf call that a %s or %c consumes."""
    fmt = args[1]
    if not is_literal(fmt):
        return ["<the format itself: %s>" % fmt]
    body = "".join(re.findall(STRING, fmt))
    out, k = [], 2
    for conv in re.finditer(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([a-zA-Z%])", body):
        if conv.group(5) == "%":
            continue
        k += (conv.group(2) == "*") + (conv.group(3) == "*")
        if conv.group(5) in "sc":
            out.append(args[k] if k < len(args) else "<missing argument>")
        k += 1
    return out


def main():
    launch = sys.argv[1]
    bad = []
    for name in FILES:
        with open(os.path.join(launch, name)) as f:
            text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), f.read(), flags=re.S)
        for line, args in calls(text, "sbuf_puts"):
            if not is_constant(args[1]):
                bad.append("%s:%d sbuf_puts(%s)" % (name, line, args[1]))
        for line, args in calls(text, "sbuf_printf"):
            for a in string_args(args):
                if not is_constant(a):
                    bad.append("%s:%d sbuf_printf %%s of %s" % (name, line, a))
    for b in bad:
        print("FAIL " + b + ": escape it (sbuf_html, sbuf_md, sbuf_md_code) or list why it is a constant")
    print("%d files checked, %d raw strings" % (len(FILES), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
