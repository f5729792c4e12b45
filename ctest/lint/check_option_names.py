"""One word per concept (issue 42, item 3): reads every program's and verb's option table (option_tables' rows)
and fails when a long name has two types or two units, when a deprecated synonym is still a primary name,
when an option lacks a help text, or when a typed option lacks the unit its type or metavar calls for.
Untyped options (the callback parses them) are listed as warnings."""
import subprocess
import sys

# The spelling that lost, and the one every program and verb uses (nccl-tests' where it has one).
SYNONYMS = {"reps": "iters", "dtype": "datatype", "device": "backend", "comm-timeout": "wait-timeout"}
# Names with one meaning on one side only: the programs' --tolerance is "below the peers", the front-end's
# "below the baseline" is --baseline-tolerance.
PROGRAMS_ONLY = {"tolerance"}
# The unit a type or a metavar calls for.
UNIT_OF_TYPE = {"percentage": "%", "size": "bytes"}
UNIT_OF_METAVAR = {"SEC": "s", "SECONDS": "s", "GB/s": "GB/s", "GBPS": "Gb/s", "BYTES": "bytes"}


def read_rows(lines):
    options, aliases = [], []
    for line in lines:
        f = line.rstrip("\n").split("\t")
        if f[0] == "option" and len(f) == 7:
            options.append(dict(zip(("owner", "name", "type", "unit", "metavar", "help"), f[1:])))
        elif f[0] == "alias" and len(f) == 4:
            aliases.append(dict(zip(("owner", "name", "target"), f[1:])))
    return options, aliases


def name_problems(options):
    out = []
    for o in options:
        where = "%s --%s" % (o["owner"], o["name"])
        if o["name"] in SYNONYMS:
            out.append(
                "%s: '%s' is a synonym of '%s': make it a deprecated alias" % (where, o["name"], SYNONYMS[o["name"]])
            )
        if o["name"] in PROGRAMS_ONLY and o["owner"].startswith("gpuaccept "):
            out.append(
                "%s: '%s' means 'below the peers' in the programs: the front-end needs its own name"
                % (where, o["name"])
            )
        if not o["help"]:
            out.append("%s: no help text" % where)
    return out


def type_problems(options):
    out, seen = [], {}
    for o in options:
        where = "%s --%s" % (o["owner"], o["name"])
        if o["type"] == "untyped":
            continue
        want = UNIT_OF_TYPE.get(o["type"]) or UNIT_OF_METAVAR.get(o["metavar"])
        if want and o["unit"] != want:
            out.append("%s: a %s (%s) in %r, not %r" % (where, o["type"], o["metavar"], want, o["unit"]))
        first = seen.setdefault(o["name"], o)
        if (first["type"], first["unit"]) != (o["type"], o["unit"]):
            out.append(
                "--%s: a %s in %r in %s, a %s in %r in %s"
                % (o["name"], first["type"], first["unit"], first["owner"], o["type"], o["unit"], o["owner"])
            )
    return out


def alias_problems(options, aliases):
    names = {(o["owner"], o["name"]) for o in options}
    return [
        "%s --%s: an alias of --%s, which it does not have" % (a["owner"], a["name"], a["target"])
        for a in aliases
        if (a["owner"], a["target"]) not in names
    ]


BEGIN = "<!-- option index: generated from the tables by ctest/lint/check_option_names.py --write-doc -->"
END = "<!-- end of the option index -->"


def doc_index(options, aliases):
    """docs/options.md's index of every option: one row per long name, its type, unit and owners."""
    by_name = {}
    for o in options:
        by_name.setdefault(o["name"], []).append(o)
    out = [BEGIN, "", "| option | type | unit | where |", "|---|---|---|---|"]
    for name in sorted(by_name):
        rows = by_name[name]
        metavar = next((r["metavar"] for r in rows if r["metavar"]), "")
        owners = ", ".join(sorted({r["owner"] for r in rows}))
        label = ("`--%s %s`" % (name, metavar)).replace("|", "\\|") if metavar else "`--%s`" % name
        out.append("| %s | %s | %s | %s |" % (label, rows[0]["type"], rows[0]["unit"] or "", owners))
    out += ["", "| deprecated | use | where |", "|---|---|---|"]
    by_alias = {}
    for a in aliases:
        by_alias.setdefault((a["name"], a["target"]), []).append(a["owner"])
    for (name, target), owners in sorted(by_alias.items()):
        out.append("| `--%s` | `--%s` | %s |" % (name, target, ", ".join(sorted(owners))))
    return "\n".join(out + ["", END])


def check_doc(path, index, write):
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit("FAIL: %s has no option index (%s ... %s)" % (path, BEGIN, END))
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    if text[start:stop] == index:
        print("%s: the option index matches the tables" % path)
        return
    if write:
        with open(path, "w") as f:
            f.write(text[:start] + index + text[stop:])
        print("%s: option index rewritten" % path)
        return
    sys.exit(
        "FAIL: %s's option index differs from the tables: run check_option_names.py BINARY --write-doc %s"
        % (path, path)
    )


def main():
    """check_option_names.py OPTION_TABLES_BINARY; SAMPLE.tsv --expect-problems N (the guard's own test);
    OPTION_TABLES_BINARY --check-doc|--write-doc docs/options.md (its index of every option)."""
    args = sys.argv[1:]
    expect = None
    if len(args) == 3 and args[1] in ("--check-doc", "--write-doc"):
        lines = subprocess.run([args[0]], check=True, capture_output=True, text=True).stdout.splitlines()
        check_doc(args[2], doc_index(*read_rows(lines)), args[1] == "--write-doc")
        return
    if len(args) == 3 and args[1] == "--expect-problems":
        expect = int(args[2])
    elif len(args) != 1:
        sys.exit(main.__doc__)
    if args[0].endswith(".tsv"):
        with open(args[0]) as f:
            lines = f.read().splitlines()
    else:
        lines = subprocess.run([args[0]], check=True, capture_output=True, text=True).stdout.splitlines()
    options, aliases = read_rows(lines)
    if expect is None and len(options) < 50:
        sys.exit("FAIL: only %d options read: the dump is broken" % len(options))
    for o in options:
        if o["type"] == "untyped":
            print("warning: %s --%s is untyped (its program's callback parses it)" % (o["owner"], o["name"]))
    problems = name_problems(options) + type_problems(options) + alias_problems(options, aliases)
    for p in problems:
        print("FAIL: " + p)
    print("%d options, %d aliases, %d problems" % (len(options), len(aliases), len(problems)))
    if expect is not None:
        sys.exit(0 if len(problems) == expect else "expected %d problems" % expect)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
