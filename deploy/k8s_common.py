"""What the two Kubernetes deployments share: deploy/mpijob (the MPIJob) and deploy/daemonset (the per-node
DaemonSet). Their renderers refuse, with the same words, what the Kubernetes API would refuse and write YAML the
same way; their validators load and report manifests the same way. Each script puts this directory on sys.path
itself, so it works when run directly from any working directory.

The rendering part is Python 3 standard library only (the renderers run wherever kubectl does); the validators'
loop imports PyYAML only when it is called.
"""
import json
import os
import re
import shlex
import sys

# --- what the Kubernetes API would refuse, refused here first (exit 2, one line)
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
# Kubernetes accepts more (dots, dashes), but the names also pass through a shell and mpirun -x.
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUANTITY = re.compile(r"^([0-9]+(\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MI = 1 << 20


class Refused(Exception):
    pass


# The suite's programs, in run order: the registry's data file, the one table that names them (the front-end's
# C table is generated from it at build time; this script runs where nothing is built). ctest
# suite.programs_registry holds it to `gpuaccept run --list-programs`.
REGISTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "suite", "registry", "programs.json")


def read_programs(path=REGISTRY, per_node_only=False):
    """The programs' names in run order; per_node_only: those of the per-node plan (the DaemonSet's)."""
    try:
        with open(path) as f:
            rows = json.load(f)["programs"]
        names = [r["name"] for r in rows if r.get("per_node") or not per_node_only]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(
            "cannot read the program registry {}: {} (run the renderer from a checkout of the "
            "repository)".format(path, getattr(e, "strerror", None) or e)
        )
    if not names:
        sys.exit("no programs found in {}".format(path))
    return names


def label_key_ok(k):
    prefix, _, name = k.rpartition("/")
    if "/" in k and not prefix:
        return False
    return (
        len(name) <= 63
        and bool(QUALIFIED_NAME.match(name))
        and (not prefix or (len(prefix) <= 253 and bool(DNS1123_SUBDOMAIN.match(prefix))))
    )


def label_value_ok(v):
    return v == "" or (len(v) <= 63 and bool(QUALIFIED_NAME.match(v)))


def quantity_bytes(q):
    m = QUANTITY.match(q)
    if not m:
        raise Refused("'{}' is not a Kubernetes quantity (e.g. 32Gi, 500Mi)".format(q))
    mult = {
        None: 1,
        "m": 0.001,
        "k": 10**3,
        "M": 10**6,
        "G": 10**9,
        "T": 10**12,
        "P": 10**15,
        "E": 10**18,
        "Ki": 1 << 10,
        "Mi": 1 << 20,
        "Gi": 1 << 30,
        "Ti": 1 << 40,
        "Pi": 1 << 50,
        "Ei": 1 << 60,
    }
    return int(float(m.group(1)) * mult[m.group(3)])


def memory_limit(memory, shm_size):
    """A container's memory limit: its request plus /dev/shm, since a memory-backed emptyDir is charged to the
    pod's memory. Whole MiB, rounded up."""
    return "{}Mi".format((quantity_bytes(memory) + quantity_bytes(shm_size) + MI - 1) // MI)


def parse_key_value(opt, text):
    k, sep, v = text.partition("=")
    if not sep:
        raise Refused("{} '{}': expected KEY=VALUE".format(opt, text))
    return k, v


def parse_toleration(text):
    """key[=value]:effect, as kubectl taint writes a taint; key alone with 'Exists' when there is no value."""
    kv, sep, effect = text.rpartition(":")
    if not sep or effect not in EFFECTS:
        raise Refused(
            "--toleration '{}': expected key[=value]:effect, effect one of {}".format(text, ", ".join(EFFECTS))
        )
    key, has_value, value = kv.partition("=")
    if not label_key_ok(key):
        raise Refused("--toleration '{}': '{}' is not a valid taint key".format(text, key))
    if has_value and not label_value_ok(value):
        raise Refused("--toleration '{}': '{}' is not a valid taint value".format(text, value))
    t = {"key": key, "operator": "Equal" if has_value else "Exists"}
    if has_value:
        t["value"] = value
    t["effect"] = effect
    return t


# The machine's name for every rank (common/core/ga_job.h GA_NODE_NAME_ENV): a pod's host name is the pod's,
# and spec.nodeName reaches a container only as an environment variable through the downward API (a
# downwardAPI volume carries metadata and resources, not spec.nodeName). Not GPUACCEPT_*: gpuaccept run
# forwards those from the launcher to every rank, and each rank must keep its own node's name.
NODE_NAME_ENV = "GA_NODE_NAME"


def node_name_env():
    """The container's env entry that gives gpuaccept the node's name (issue 41, item 1)."""
    return {"name": NODE_NAME_ENV, "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


def check_dns1123_label(opt, v):
    if not DNS1123_LABEL.match(v) or len(v) > 63:
        raise Refused("{} '{}' is not a valid DNS-1123 label".format(opt, v))


def check_subdomains(pairs):
    """(option, value) pairs; an empty value is an option not given."""
    for opt, v in pairs:
        if v and (not DNS1123_SUBDOMAIN.match(v) or len(v) > 253):
            raise Refused("{} '{}' is not a valid DNS-1123 subdomain".format(opt, v))


def check_node_selector(pairs):
    for k, v in pairs:
        if not label_key_ok(k):
            raise Refused("--node-selector '{}={}': '{}' is not a valid label key".format(k, v, k))
        if not label_value_ok(v):
            raise Refused("--node-selector '{}={}': '{}' is not a valid label value".format(k, v, v))


def check_env_names(pairs):
    for k, _ in pairs:
        if not ENV_NAME.match(k):
            raise Refused("--env '{}': not a valid environment variable name".format(k))


def check_quantities(pairs):
    """(option, value) pairs that must be Kubernetes quantities."""
    for opt, q in pairs:
        try:
            quantity_bytes(q)
        except Refused as e:
            raise Refused("{} {}".format(opt, e))


def quote_args(text):
    """--args split as a shell would and quoted again word by word, so that the pod's shell passes each word
    to gpuaccept run as it is and runs none of them."""
    try:
        return " ".join(shlex.quote(w) for w in shlex.split(text))
    except ValueError as e:
        raise Refused("--args '{}': {}".format(text, e))


def render_main(argv, parse_args, render, write_examples):
    """A renderer's main: the manifest to stdout, or write_examples(parsed options) with --examples; what the
    API would refuse is one line on stderr and exit 2, with nothing on stdout."""
    a = parse_args(argv)
    try:
        if a.examples:
            write_examples(a)
        else:
            sys.stdout.write(render(argv))
    except Refused as e:
        sys.stderr.write("render.py: {}\n".format(e))
        return 2
    return 0


# --- a small YAML writer: block style, strings quoted whenever a YAML reader could take them otherwise.
PLAIN = re.compile(r"^[A-Za-z/][A-Za-z0-9_./-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if PLAIN.match(v) and v.lower() not in YAML_WORDS:
        return v
    return json.dumps(v)  # a JSON string is a valid YAML double-quoted scalar


def emit(v, indent=0):
    pad = " " * indent
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x:
                out.append("{}{}:".format(pad, scalar(k)))
                out.extend(emit(x, indent + 2))
            else:
                out.append("{}{}: {}".format(pad, scalar(k), one_line(x, indent + 2)))
    else:
        for x in v:
            sub = emit(x, indent + 2) if isinstance(x, (dict, list)) and x else None
            if sub:
                out.append(pad + "- " + sub[0].lstrip())
                out.extend(sub[1:])
            else:
                out.append("{}- {}".format(pad, one_line(x, indent + 2)))
    return out


def one_line(x, indent):
    if isinstance(x, dict):
        return "{}"
    if isinstance(x, list):
        return "[]"
    if isinstance(x, str) and "\n" in x:
        # A literal block keeps a container's script readable in `kubectl get -o yaml`.
        return "|\n" + "\n".join((" " * indent + l) if l else "" for l in x.rstrip("\n").split("\n"))
    return scalar(x)


def to_yaml(obj):
    return "---\n" + "\n".join(emit(obj)) + "\n"


# --- the validators' loop
def validate_files(tool, paths, document_errors, empty_is_error):
    """Loads every YAML document of every file and prints each error of document_errors(doc, docs) as
    'file: document N: path: message', then a count. Returns the exit status: 0 when all are valid, else 1.
    empty_is_error: a file with no document counts as invalid."""
    import yaml  # only the validators need PyYAML; the renderers run on the standard library

    bad = 0
    for path in paths:
        try:
            with open(path) as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            print("{}: {}".format(path, e))
            bad += 1
            continue
        if empty_is_error and not docs:
            print("{}: no YAML document".format(path))
            bad += 1
        for i, doc in enumerate(docs):
            errs = document_errors(doc, docs)
            for e in errs:
                print("{}: document {}: {}".format(path, i + 1, e))
            bad += bool(errs)
    print("{}: {} file(s), {} invalid document(s)".format(tool, len(paths), bad))
    return 1 if bad else 0


def schema_errors(validator, doc):
    """A jsonschema validator's errors for one object, as 'path: message' lines."""
    return [
        "{}: {}".format("/".join(str(x) for x in e.absolute_path) or "(root)", e.message)
        for e in validator.iter_errors(doc)
    ]
