#!/usr/bin/env python3
"""Validates MPIJob manifests offline, as far as a cluster would before running them.

    validate_mpijob.py [--crd kubeflow.org_mpijobs.yaml] job.yaml [more.yaml ...]

Three layers, each reported with the file, the document and the path of the offending field:
1. the CRD's openAPIV3Schema, as the API server applies it, with kubectl's strict field validation
   (an unknown field is an error, not silently pruned: that is how a misspelt slotsPerWorker vanishes);
2. the rules the schema leaves to the mpi-operator (see schema/SOURCE.md);
3. gpuaccept's own rules for its manifests (skip with --no-suite-rules).
Needs PyYAML and jsonschema (Debian: python3-yaml python3-jsonschema). Exit 0 valid, 1 invalid, 2 usage.
"""
import argparse
import os
import re
import sys

import jsonschema
import yaml

sys.dont_write_bytecode = True  # run from a checkout: leave no __pycache__ in deploy/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from k8s_common import schema_errors, validate_files  # noqa: E402

DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}

# The CRD vendored beside this script (schema/SOURCE.md says where it comes from).
VENDORED_CRD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema", "kubeflow.org_mpijobs.yaml")


def structural_to_jsonschema(node):
    """Rewrites a Kubernetes structural schema into plain JSON Schema, in place, and returns it."""
    if isinstance(node, list):
        for x in node:
            structural_to_jsonschema(x)
        return node
    if not isinstance(node, dict):
        return node
    for key in ("properties", "additionalProperties", "items"):
        sub = node.get(key)
        if isinstance(sub, dict) and key == "properties":
            for s in sub.values():
                structural_to_jsonschema(s)
        elif isinstance(sub, dict):
            structural_to_jsonschema(sub)
    for s in node.get("anyOf", []) + node.get("allOf", []):
        structural_to_jsonschema(s)
    # int-or-string fields (quantities, ports) carry no type of their own.
    if node.get("x-kubernetes-int-or-string") and "type" not in node and "anyOf" not in node:
        node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    # kubectl --validate=strict: fields the schema does not name are errors unless it preserves them.
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        node["additionalProperties"] = False
    if node.get("x-kubernetes-list-type") == "set":
        node["uniqueItems"] = True
    return node


def list_map_keys(validator, keys, instance, schema):
    """x-kubernetes-list-type: map: no two items may share the values of the key fields."""
    if not validator.is_type(instance, "array"):
        return
    props = schema.get("items", {}).get("properties", {})
    seen = set()
    for item in instance:
        if not isinstance(item, dict):
            continue
        k = tuple(str(item.get(f, props.get(f, {}).get("default"))) for f in keys)
        if k in seen:
            yield jsonschema.ValidationError("duplicate entry for keys {} = {}".format(keys, list(k)))
        seen.add(k)


def k8s_format(validator, fmt, instance, schema):
    if fmt in INT_RANGES and validator.is_type(instance, "integer"):
        lo, hi = INT_RANGES[fmt]
        if not lo <= instance <= hi:
            yield jsonschema.ValidationError("{} is out of range for {}".format(instance, fmt))


def make_validator(crd_path):
    with open(crd_path) as f:
        crd = yaml.safe_load(f)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v2beta1")
    schema = structural_to_jsonschema(version["schema"]["openAPIV3Schema"])
    cls = jsonschema.validators.extend(
        jsonschema.Draft7Validator, {"x-kubernetes-list-map-keys": list_map_keys, "format": k8s_format}
    )
    return cls(schema)


def operator_errors(doc):
    """The mpi-operator's own validation and defaults, which the schema does not express."""
    errs = []
    if doc.get("apiVersion") != "kubeflow.org/v2beta1" or doc.get("kind") != "MPIJob":
        return ["apiVersion/kind: must be kubeflow.org/v2beta1 MPIJob"]
    spec = doc.get("spec") or {}
    name = (doc.get("metadata") or {}).get("name")
    replicas = spec.get("mpiReplicaSpecs") or {}
    for role in sorted(set(replicas) - {"Launcher", "Worker"}):
        errs.append("spec.mpiReplicaSpecs.{}: only Launcher and Worker exist".format(role))
    if "Launcher" not in replicas:
        errs.append("spec.mpiReplicaSpecs.Launcher: missing")
    elif replicas["Launcher"].get("replicas", 1) != 1:
        errs.append("spec.mpiReplicaSpecs.Launcher.replicas: must be 1")
    workers = replicas.get("Worker", {}).get("replicas", 1) if "Worker" in replicas else 0
    if "Worker" in replicas and workers < 1:
        errs.append("spec.mpiReplicaSpecs.Worker.replicas: must be at least 1")
    for role, r in sorted(replicas.items()):
        if r.get("restartPolicy", "Never") not in ("Never", "OnFailure"):
            errs.append("spec.mpiReplicaSpecs.{}.restartPolicy: must be Never or OnFailure".format(role))
    if spec.get("launcherCreationPolicy", "AtStartup") not in ("AtStartup", "WaitForWorkersReady"):
        errs.append("spec.launcherCreationPolicy: must be AtStartup or WaitForWorkersReady")
    if (spec.get("runPolicy") or {}).get("cleanPodPolicy", "None") not in ("None", "Running", "All"):
        errs.append("spec.runPolicy.cleanPodPolicy: must be None, Running or All")
    if not isinstance(name, str) or not name:
        errs.append("metadata.name: missing")
    else:
        # The operator names pods and services after the job; the longest must be a DNS-1035 label.
        for pod in ["{}-launcher".format(name)] + ["{}-worker-{}".format(name, max(workers - 1, 0))]:
            if len(pod) > 63 or not DNS1035.match(pod):
                errs.append("metadata.name: '{}' is not a valid DNS-1035 label".format(pod))
    return errs


def suite_errors(doc):
    """What gpuaccept's manifests promise: see deploy/mpijob/render.py and docs/deployment.md."""
    errs = []
    spec = doc.get("spec") or {}
    if spec.get("launcherCreationPolicy") != "WaitForWorkersReady":
        errs.append("spec.launcherCreationPolicy: gpuaccept sets WaitForWorkersReady (ssh race at start)")
    run = spec.get("runPolicy") or {}
    for field in ("cleanPodPolicy", "ttlSecondsAfterFinished"):
        if field not in run:
            errs.append("spec.runPolicy.{}: gpuaccept sets it so finished jobs are cleaned up".format(field))
    replicas = spec.get("mpiReplicaSpecs") or {}
    if spec.get("runLauncherAsWorker") is not True:
        # Rank 0 writes every report; gpuaccept run on the launcher reads them, so rank 0 must run there.
        errs.append("spec.runLauncherAsWorker: gpuaccept sets it so rank 0 and its reports are in the launcher")
    ranked = [
        role
        for role in ("Launcher", "Worker")
        if role in replicas and (role == "Worker" or spec.get("runLauncherAsWorker") is True)
    ]
    if not ranked:
        return errs + ["spec.mpiReplicaSpecs.Worker: gpuaccept needs workers"]
    for role in ranked:
        errs += rank_pod_errors(role, replicas[role].get("template", {}).get("spec", {}), spec)
    return errs + sockets_errors(replicas.get("Launcher") or {})


def sockets_errors(launcher):
    """NCCL kept off InfiniBand (NCCL_IB_DISABLE=1, NCCL_NET=Socket) only where gpuaccept run is told that
    sockets are intended (--allow-sockets, what render.py --no-ib writes): otherwise the run could not pass on a
    cluster with HCAs, and one without would not say that InfiniBand was not exercised."""
    for c in (launcher.get("template") or {}).get("spec", {}).get("containers", []):
        env = {e.get("name"): str(e.get("value", "")) for e in c.get("env", [])}
        forced = env.get("NCCL_IB_DISABLE", "0") not in ("", "0") or env.get("NCCL_NET", "").lower() == "socket"
        if forced and not any("--allow-sockets" in str(w) for w in c.get("command", []) + c.get("args", [])):
            return [
                "Launcher: container {} sets NCCL onto sockets (NCCL_IB_DISABLE/NCCL_NET) without "
                "gpuaccept run --allow-sockets (render.py --no-ib)".format(c.get("name"))
            ]
    return []


QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$")
UNITS = {
    None: 1,
    "m": 0.001,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}


def quantity(q):
    """A Kubernetes quantity in base units; None when it is not one the schema lets through plainly."""
    m = QUANTITY.match(str(q))
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def rank_pod_errors(role, pod, spec):
    """A pod that runs ranks: NCCL's /dev/shm, one rank per GPU, and memory enough for both."""
    errs = []
    shm = [v for v in pod.get("volumes", []) if (v.get("emptyDir") or {}).get("medium") == "Memory"]
    mounts = {m.get("name"): m.get("mountPath") for c in pod.get("containers", []) for m in c.get("volumeMounts", [])}
    shm = [v for v in shm if mounts.get(v["name"]) == "/dev/shm"]
    if not shm:
        errs.append("{}: /dev/shm must be a memory-backed emptyDir (NCCL's shared memory)".format(role))
    for c in pod.get("containers", []):
        res = c.get("resources") or {}
        gpus = (res.get("limits") or {}).get("nvidia.com/gpu")
        if gpus is not None and str(gpus) != str(spec.get("slotsPerWorker", 1)):
            errs.append(
                "spec.slotsPerWorker: {} but container {} has nvidia.com/gpu {}; one rank per GPU".format(
                    spec.get("slotsPerWorker", 1), c.get("name"), gpus
                )
            )
        req = res.get("requests") or {}
        if "cpu" not in req or "memory" not in req:
            errs.append(
                "{}: container {} requests no cpu or memory: BestEffort, evicted first".format(role, c.get("name"))
            )
            continue
        limit = quantity((res.get("limits") or {}).get("memory", "0"))
        need = quantity(req["memory"]) + sum(quantity(v["emptyDir"].get("sizeLimit", "0")) or 0 for v in shm)
        if limit is None or limit < need:
            errs.append(
                "{}: container {} memory limit {} is below its request plus /dev/shm ({:.0f} MiB)".format(
                    role, c.get("name"), (res.get("limits") or {}).get("memory"), need / 2**20
                )
            )
    return errs


def document_errors(validator, doc, suite_rules=True):
    """Every error in one parsed manifest, as 'path: message' lines; [] when it is valid."""
    errs = schema_errors(validator, doc)
    if errs:  # the operator's and the suite's rules assume a well-formed object
        return errs
    return operator_errors(doc) + (suite_errors(doc) if suite_rules else [])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--crd",
        default=VENDORED_CRD,
        help="kubeflow.org_mpijobs.yaml from the mpi-operator (default: the copy in schema/)",
    )
    p.add_argument("--no-suite-rules", action="store_true", help="check only the CRD and the operator")
    p.add_argument("manifests", nargs="+")
    a = p.parse_args(argv)
    try:
        validator = make_validator(a.crd)
    except (OSError, yaml.YAMLError, KeyError, StopIteration) as e:
        print("validate_mpijob: cannot read the CRD {}: {}".format(a.crd, e), file=sys.stderr)
        return 2
    return validate_files(
        "validate_mpijob",
        a.manifests,
        lambda doc, docs: document_errors(validator, doc, not a.no_suite_rules),
        empty_is_error=True,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
