#!/usr/bin/env python3
"""Every file of the product opens with a comment that says what it is for: each header, and each C, C++ or CUDA
source that has no header of its own beside it (a .c with its .h is described there). A reader entering the
tree finds, at the top of each file, why it exists.

    check_header_comments.py SOURCE_DIR"""
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, finish  # noqa: E402

SOURCES = (".c", ".cu", ".cpp")
HEADERS = (".h", ".cuh")


def opens_with_comment(path):
    with open(path, errors="replace") as f:
        first = f.readline()
    return first.startswith("/*") or first.startswith("//")


def undescribed(root):
    """The files of common/, bench/ and suite/ that say nothing about themselves at the top."""
    missing = []
    for folder in ("common", "bench", "suite"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in HEADERS and not opens_with_comment(path):
                missing.append(path)
            elif path.suffix in SOURCES and not opens_with_comment(path):
                header = path.with_suffix(".h")
                if not (header.is_file() and opens_with_comment(header)):
                    missing.append(path)
    return missing


root = pathlib.Path(sys.argv[1])
# The rule must catch a file without a comment: a made-up tree with one header, one source alone, and one
# source described by its header.
with tempfile.TemporaryDirectory() as tmp:
    t = pathlib.Path(tmp)
    (t / "common").mkdir()
    (t / "common" / "bare.h").write_text("#ifndef BARE_H\n#endif\n")
    (t / "common" / "alone.c").write_text("int f(void) { return 0; }\n")
    (t / "common" / "told.h").write_text("/* What told is for. */\n")
    (t / "common" / "told.c").write_text('#include "told.h"\n')
    got = sorted(p.name for p in undescribed(t))
    check(got == ["alone.c", "bare.h"], "a made-up header and a lone source without a comment are caught: %s" % got)

missing = undescribed(root)
check(
    missing == [],
    "every header, and every source without its own header, opens with a comment%s"
    % ("" if not missing else ": " + " ".join(str(p.relative_to(root)) for p in missing)),
)
finish()
