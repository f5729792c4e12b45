#!/usr/bin/python3
"""Validates the per-node DaemonSet manifest (and its Namespace, ServiceAccount and RBAC objects) offline
against the Kubernetes API's JSON schema vendored in schema/ (strict: an unknown field is an error), plus what
the API server and gpuaccept check beyond the schema.

    validate_k8s.py daemonset.yaml ...

Needs PyYAML and jsonschema (Debian: python3-yaml python3-jsonschema). Exit 0 when every document is valid.
"""
import argparse
import json
import os
import sys

import jsonschema

sys.dont_write_bytecode = True  # run from a checkout: leave no __pycache__ in deploy/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from k8s_common import schema_errors, validate_files  # noqa: E402

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")
# (apiVersion, kind) -> the schema file of that kind; the kinds this directory ships.
KINDS = {
    ("apps/v1", "DaemonSet"): "daemonset-apps-v1.json",
    ("v1", "ServiceAccount"): "serviceaccount-v1.json",
    ("v1", "Namespace"): "namespace-v1.json",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "clusterrole-rbac-v1.json",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "clusterrolebinding-rbac-v1.json",
}


def load(name):
    with open(os.path.join(SCHEMA_DIR, name)) as f:
        return json.load(f)


def make_validators():
    """One validator per kind; their $refs resolve into the vendored _definitions.json, never the network."""
    defs = load("_definitions.json")
    store = {defs["$id"]: defs}
    out = {}
    for key, name in KINDS.items():
        schema = load(name)
        cls = jsonschema.validators.validator_for(schema)
        resolver = jsonschema.RefResolver(schema["$id"], schema, store=store)
        out[key] = cls(schema, resolver=resolver, format_checker=cls.FORMAT_CHECKER)
    return out


def env_of(container):
    return {e.get("name"): e for e in container.get("env") or []}


def semantic_errors(doc, docs):
    """What the API server (or gpuaccept's design) requires beyond the schema, for a well-formed object."""
    errs = []
    kind = doc.get("kind")
    if kind == "DaemonSet":
        spec = doc["spec"]
        tmpl = spec.get("template", {})
        want = (spec.get("selector") or {}).get("matchLabels") or {}
        have = (tmpl.get("metadata") or {}).get("labels") or {}
        if not want or any(have.get(k) != v for k, v in want.items()):
            errs.append("spec.selector: does not match the template's labels (the API server refuses it)")
        pod = tmpl.get("spec", {})
        if pod.get("restartPolicy", "Always") != "Always":
            errs.append("spec.template.spec.restartPolicy: a DaemonSet's must be Always")
        inits = {c.get("name"): c for c in pod.get("initContainers") or []}
        for name in ("check", "label"):
            if name not in inits:
                errs.append("initContainers: gpuaccept needs '{}'".format(name))
                continue
            ref = ((env_of(inits[name]).get("NODE_NAME") or {}).get("valueFrom") or {}).get("fieldRef") or {}
            if ref.get("fieldPath") != "spec.nodeName":
                errs.append("initContainers.{}: NODE_NAME must come from the downward API (spec.nodeName)".format(name))
        if "label" in inits and "$(NODE_NAME)" not in inits["label"].get("command", []):
            errs.append("initContainers.label: must patch its own node, $(NODE_NAME)")
        sa = pod.get("serviceAccountName")
        ns = doc["metadata"].get("namespace")
        bound = [
            d
            for d in docs
            if d.get("kind") == "ClusterRoleBinding"
            and any(
                s.get("kind") == "ServiceAccount" and s.get("name") == sa and s.get("namespace") == ns
                for s in d.get("subjects") or []
            )
        ]
        roles = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "ClusterRole"}
        can_patch = any(
            any(
                "" in r.get("apiGroups", []) and "nodes" in r.get("resources", []) and "patch" in r.get("verbs", [])
                for r in (roles.get(b["roleRef"]["name"]) or {}).get("rules") or []
            )
            for b in bound
        )
        if not sa or not can_patch:
            errs.append(
                "spec.template.spec.serviceAccountName: '{}' in {} is not bound to a ClusterRole that "
                "may patch nodes".format(sa, ns)
            )
    if kind == "ClusterRoleBinding" and doc["roleRef"].get("kind") not in ("ClusterRole", "Role"):
        errs.append("roleRef.kind: must be ClusterRole or Role")
    return errs


def document_errors(validators, doc, docs=()):
    """Every error of one parsed object, as 'path: message' lines; [] when it is valid."""
    if not isinstance(doc, dict):
        return ["(root): not an object"]
    v = validators.get((doc.get("apiVersion"), doc.get("kind")))
    if v is None:
        return ["(root): no vendored schema for {} {}".format(doc.get("apiVersion"), doc.get("kind"))]
    return schema_errors(v, doc) or semantic_errors(doc, docs)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("manifests", nargs="+")
    a = p.parse_args(argv)
    validators = make_validators()
    return validate_files(
        "validate_k8s", a.manifests, lambda doc, docs: document_errors(validators, doc, docs), empty_is_error=False
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
