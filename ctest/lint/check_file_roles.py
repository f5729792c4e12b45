#!/usr/bin/env python3
"""Every program names its files by the same roles (docs/architecture.md, "bench/<program>/"): one
<p>_record.h (what a rank measured) gives the program's prefix p, and beside it stand <p>_opts.c (the option
table and its handler), <p>_analysis.c (the pure analysis), <p>_json.c (the record as JSON) and main.c. A
reader who knows one program finds the same parts in the next.

    check_file_roles.py SOURCE_DIR"""
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, finish  # noqa: E402

ROLES = ("{p}_opts.c", "{p}_analysis.c", "{p}_json.c", "main.c")


def missing_roles(bench):
    """{program: [what it lacks]} for each bench/<program>/ with a CMakeLists.txt."""
    out = {}
    for d in sorted(p for p in bench.iterdir() if (p / "CMakeLists.txt").is_file()):
        records = sorted(d.glob("*_record.h"))
        if len(records) != 1:
            out[d.name] = ["one <p>_record.h (found %d)" % len(records)]
            continue
        p = records[0].name[: -len("_record.h")]
        lacks = [r.format(p=p) for r in ROLES if not (d / r.format(p=p)).is_file()]
        if lacks:
            out[d.name] = lacks
    return out


# The rule must catch a program without its parts: a made-up bench/ with one whole program and one without
# its _json.c.
with tempfile.TemporaryDirectory() as tmp:
    for name, files in (
        ("whole", ["wh_record.h", "wh_opts.c", "wh_analysis.c", "wh_json.c", "main.c"]),
        ("partial", ["pa_record.h", "pa_opts.c", "pa_analysis.c", "main.c"]),
    ):
        d = pathlib.Path(tmp) / name
        d.mkdir()
        for f in files + ["CMakeLists.txt"]:
            (d / f).write_text("")
    got = missing_roles(pathlib.Path(tmp))
    check(got == {"partial": ["pa_json.c"]}, "a made-up program without its _json.c is caught: %s" % got)

got = missing_roles(pathlib.Path(sys.argv[1]) / "bench")
check(
    got == {},
    "every program has <p>_record.h, <p>_opts.c, <p>_analysis.c, <p>_json.c and main.c%s"
    % ("" if not got else ": missing " + repr(got)),
)
finish()
