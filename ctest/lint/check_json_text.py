#!/usr/bin/env python3
"""Text from outside (host and GPU names, environment values, log lines, paths, error messages) reaches jansson
only through ga_json_text, which makes it valid UTF-8: json_string() of bytes that are not returns NULL and
json_pack() of them fails whole, so the record that held them was dropped (issue 45, item 5). Every
json_string() and every string value ("s") of a json_pack() in the programs (bench/*/) and common/analysis/
must therefore be a literal, a choice between literals, or an expression of the allow-list below (fixed names
and text formatted from numbers). Usage: check_json_text.py SOURCE_DIR [--expect-problems N]. Exit 0 pass."""
import glob
import os
import re
import sys

# Expressions known to hold fixed ASCII names or text printed from numbers only.
ALLOWED = [
    r"\w+_name\(.*\)",  # a name from a fixed table: ga_dtype_name(d), ar_pattern_name(p), ...
    r"\w+_names\[\w+\]",  # the same, as an array
    r"ar_(dtype|coll)_get\(.*\)->name",
    r"(buf|now|cc|hex|sum0|root_s|pci|unit|name|value_key|backend|type|op|dtype|title|x_label|y_label|label)",
    r"fig->name",  # a figure's name from the program's own table
    r"fd->name",  # an audited field's name from env_audit's table
    r"gdr_word\(.*\)|link",
]
ALLOWED_RE = re.compile(r"^(?:%s)$" % "|".join(ALLOWED))
LITERAL = r'(?:"(?:[^"\\]|\\.)*"\s*)+'
LITERAL_RE = re.compile(r"^%s$" % LITERAL)
TERNARY_RE = re.compile(r"^[^?\"]*\?\s*([^:]+?)\s*:\s*(.+)$")


def call_args(text, start):
    """The top-level arguments of the call whose '(' is at start, and the index after its ')'."""
    args, depth, cur, i = [], 0, "", start
    while i < len(text):
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            cur += text[i : j + 1]
            i = j + 1
            continue
        if c in "([{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args, i + 1
        elif c == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            i += 1
            continue
        cur += c
        i += 1
    return args, i


def value_strings(fmt):
    """For each argument the format consumes, whether it is a string value (not an object's key)."""
    kinds, stack = [], []
    for c in re.sub(r'"\s*"', "", fmt).strip('"'):
        if c in "{[":
            stack.append([c, True])  # in an object, the next item is a key
        elif c in "}]":
            stack.pop()
        elif c in "sbiIfFoOn":
            is_key = bool(stack) and stack[-1][0] == "{" and stack[-1][1]
            if c != "n":
                kinds.append(c == "s" and not is_key)
            if stack and stack[-1][0] == "{":
                stack[-1][1] = not stack[-1][1]
        elif c in "#%":
            kinds.append(False)  # a length argument
    return kinds


def ok(expr):
    """A literal, an allowed expression, or a choice between two of them (COND ? A : B)."""
    expr = " ".join(expr.split())
    if LITERAL_RE.match(expr) or ALLOWED_RE.match(expr):
        return True
    m = TERNARY_RE.match(expr)
    return bool(m) and ok(m.group(1)) and ok(m.group(2))


def problems_of(path, text):
    out = []
    for m in re.finditer(r"\b(json_string|json_pack)\s*\(", text):
        args, _ = call_args(text, m.end() - 1)
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) == "json_string":
            checked = [args[0]] if args else []
        elif not args or not LITERAL_RE.match(" ".join(args[0].split())):
            out.append("%s:%d: json_pack with a format that is not a literal" % (path, line))
            continue
        else:
            kinds = value_strings(args[0])
            checked = [a for a, s in zip(args[1:], kinds) if s]
        for a in checked:
            if not ok(a):
                out.append("%s:%d: %s of '%s': use ga_json_text" % (path, line, m.group(1), " ".join(a.split())))
    return out


def main():
    src = sys.argv[1]
    expect = int(sys.argv[sys.argv.index("--expect-problems") + 1]) if "--expect-problems" in sys.argv else 0
    files = sorted(glob.glob(os.path.join(src, "bench", "*", "*.c")))
    files += sorted(glob.glob(os.path.join(src, "common", "analysis", "*.c")))
    problems = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = re.sub(r"/\*.*?\*/", "", fh.read(), flags=re.S)
        problems += problems_of(os.path.relpath(f, src), text)
    for p in problems:
        print(p)
    print("%d file(s) checked, %d problem(s), %d expected" % (len(files), len(problems), expect))
    if not files or len(problems) != expect:
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
