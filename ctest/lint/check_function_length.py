#!/usr/bin/env python3
"""No function of the product over 80 lines: C, C++ and CUDA under common/, bench/ and suite/, Python under
deploy/ and launch/. usage: check_function_length.py SOURCE_DIR [LIMIT]. Exit 0 when none is, 1 naming each that is.
A long function made on purpose must be caught first, so that the check is shown able to fail."""
import ast
import os
import sys

root = os.path.realpath(sys.argv[1])
LIMIT = int(sys.argv[2]) if len(sys.argv) > 2 else 80
C_FOLDERS = ("common", "bench", "suite")
PY_FOLDERS = ("deploy", "launch")  # ctest/ holds the tests; no other folder has Python


def c_functions(text):
    """(name, lines) of each function body: clang-format puts a function's braces alone in column 0, which
    no struct, namespace or initialiser does."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            j = i - 1
            while j > 0 and not lines[j][:1].isalpha() and lines[j][:1] != "_":
                j -= 1
            head = lines[j]
            name = head[: head.find("(")].split()[-1].lstrip("*&") if "(" in head else head.strip()[:40]
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            yield name, k - i + 1
            i = k
        i += 1


def py_functions(text):
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.end_lineno - node.lineno + 1


def too_long(path, text):
    found = py_functions(text) if path.endswith(".py") else c_functions(text)
    return ["%s: %s is %d lines" % (path, name, n) for name, n in found if n > LIMIT]


probe = "int long_one(void)\n{\n" + "    x++;\n" * LIMIT + "}\n"
if not too_long("probe.c", probe) or not too_long("probe.py", "def f():\n" + "    x = 1\n" * LIMIT):
    sys.exit("FAIL: a function of %d lines passed: the check proves nothing" % (LIMIT + 2))

checked, bad = 0, []
for folder in C_FOLDERS + PY_FOLDERS:
    for dirpath, _, names in os.walk(os.path.join(root, folder)):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if not name.endswith((".py",) if folder in PY_FOLDERS else (".c", ".cu", ".cpp")):
                continue
            with open(path, encoding="utf-8") as fh:
                bad += too_long(rel, fh.read())
            checked += 1
for b in bad:
    print("FAIL:", b)
print("%d files checked, %d functions over %d lines" % (checked, len(bad), LIMIT))
sys.exit(1 if bad or not checked else 0)
