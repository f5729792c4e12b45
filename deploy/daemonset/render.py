#!/usr/bin/env python3
"""Renders a per-node gpuaccept DaemonSet: one pod on every GPU node checks that node alone and labels it.

    render.py --image registry.example/gpuaccept:1.0 --gpus-per-node 8 > daemonset.yaml
    render.py --examples deploy/daemonset      # rewrites the committed gpuaccept-daemonset.yaml

Each pod runs, once per start: an init container `check` (the gpuaccept image) runs `gpuaccept run` on its
node with a local plan (node_health, env_audit, gemm_flops, mem_bw and a single-node allreduce_bw, one rank
per GPU) and writes the node's verdict as a merge patch; an init container `label` (an image with kubectl)
applies it to its own node (NODE_NAME from the downward API): gpuaccept.io/verdict=pass|warn|fail and
gpuaccept.io/checked=<UTC time>. A DaemonSet pod cannot end, so a container `hold` then sleeps. Also renders
the Namespace, ServiceAccount, ClusterRole (get and patch nodes) and ClusterRoleBinding it needs.
Python 3 standard library only. See docs/deployment.md.
"""
import argparse
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, ".."))
from k8s_common import (
    Refused,
    node_name_env,
    read_programs,
    check_dns1123_label,
    check_env_names,
    check_node_selector,  # noqa: E402
    check_quantities,
    check_subdomains,
    memory_limit,
    parse_key_value,
    parse_toleration,
    quote_args,
    render_main,
    to_yaml,
)

# The single-node checks, in the suite's order: the registry's programs marked per_node (ddp_smoke is not: it
# measures a training step, whose per-node figures gemm_flops and allreduce_bw already give).
CHECKS = read_programs(per_node_only=True)
VERDICT_KEY = "gpuaccept.io/verdict"  # suite/handoff/handoff.h SUITE_K8S_KEY: the label the suite's hand-off sets
CHECKED_KEY = "gpuaccept.io/checked"
EXAMPLE = "gpuaccept-daemonset.yaml"


def check_script(a):
    """The check container's shell script. It always exits 0: an init container that fails is restarted
    forever, and a failed check is a result (the label), not a reason to retry."""
    run = [
        a.prefix + "/bin/gpuaccept",
        "run",
        "--np",
        str(a.gpus_per_node),
        "--only",
        ",".join(CHECKS),
        "--report-dir",
        a.status_dir + "/reports",
    ]
    if not a.cpu_only:
        run += ["--expect-gpus", str(a.gpus_per_node)]  # GPUs invisible to the pod fail the node, not warn
    run_line = " ".join(shlex.quote(w) for w in run) + ((" " + a.args_quoted) if a.args_quoted else "")
    return """set -u
status={sd}
rm -rf "$status/reports" "$status/patch.json"
rc=0
{run} || rc=$?
# The one node's verdict as gpuaccept's Kubernetes hand-off wrote it (the line that labels the node; the pod's
# host name stands for the node there, the label container names the node itself).
# unchecked-xid: the node did not fail, but its kernel log (Xids) could not be read (docs/deployment.md).
v=$(sed -n 's/.* {key_re}=\\(pass\\|warn\\|fail\\|unchecked-xid\\)$/\\1/p' "$status/reports/gpuaccept-k8s.sh" 2>/dev/null | head -n 1)
# No verdict, or a run that did not pass with a node that did (a step that could not measure): not a pass.
case "$v" in pass|warn|fail|unchecked-xid) ;; *) v=fail ;; esac
[ "$rc" -eq 0 ] || [ "$v" != pass ] || v=fail
printf '{{"metadata":{{"labels":{{"{key}":"%s","{checked}":"%s"}}}}}}\\n' "$v" "$(date -u +%Y%m%dT%H%M%SZ)" \\
    >"$status/patch.json"
[ ! -e "$status/reports/summary.md" ] || cat "$status/reports/summary.md"
echo "gpuaccept: node ${{NODE_NAME:-?}}: {key}=$v (gpuaccept run exit $rc)"
exit 0
""".format(
        sd=shlex.quote(a.status_dir),
        run=run_line,
        key=VERDICT_KEY,
        checked=CHECKED_KEY,
        key_re=VERDICT_KEY.replace(".", "\\.").replace("/", "\\/"),
    )


def node_check_script(a):
    """--node-check: the check container runs the fast node check (gpuaccept node-check --health: node_health on
    this node alone, seconds, no GPU load) instead of gpuaccept run, and labels the node from its one line."""
    nh = [] if a.cpu_only else ["--expect-gpus", str(a.gpus_per_node)]
    run = [a.prefix + "/bin/gpuaccept", "node-check", "--health", "--"] + nh
    run_line = " ".join(shlex.quote(w) for w in run) + ((" " + a.args_quoted) if a.args_quoted else "")
    return """set -u
status={sd}
rm -f "$status/patch.json"
rc=0
line=$(GPUACCEPT_BIN_DIR={bin} {run} 2>&1) || rc=$?
printf '%s\n' "$line"
# The label from node-check's exit and line (docs/deployment.md, "The fast node check"): a node whose kernel
# log was not read is unchecked-xid, a pass with warnings warn; anything but exit 0 is fail.
case "$rc:$line" in
0:*"Xids not checked"*) v=unchecked-xid ;;
0:*"(0 warnings)"*) v=pass ;;
0:*PASS*) v=warn ;;
*) v=fail ;;
esac
printf '{{"metadata":{{"labels":{{"{key}":"%s","{checked}":"%s"}}}}}}\n' "$v" "$(date -u +%Y%m%dT%H%M%SZ)" \
    >"$status/patch.json"
echo "gpuaccept: node ${{NODE_NAME:-?}}: {key}=$v (gpuaccept node-check exit $rc)"
exit 0
""".format(
        sd=shlex.quote(a.status_dir),
        bin=shlex.quote(a.prefix + "/bin"),
        run=run_line,
        key=VERDICT_KEY,
        checked=CHECKED_KEY,
    )


def daemonset(a):
    labels = {"app.kubernetes.io/name": "gpuaccept", "app.kubernetes.io/component": "node-check"}
    status = {"name": "status", "mountPath": a.status_dir}
    env = [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    # The ranks' own name for the node (GA_NODE_NAME): their reports name the node, not this pod.
    env += [node_name_env()] + [{"name": k, "value": v} for k, v in a.env]
    check = {
        "name": "check",
        "image": a.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c", node_check_script(a) if a.node_check else check_script(a)],
        "env": env + ([] if a.request_gpus or a.cpu_only else [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]),
        "resources": {
            "requests": {"cpu": a.cpu, "memory": a.memory},
            "limits": dict(
                {"memory": a.memory_limit}, **({"nvidia.com/gpu": a.gpus_per_node} if a.request_gpus else {})
            ),
        },
        "volumeMounts": [status, {"name": "dshm", "mountPath": "/dev/shm"}],
        # node_health's Xid check reads the kernel log: CAP_SYSLOG under kernel.dmesg_restrict=1 (Ubuntu's
        # default). Why this and not a /dev/kmsg mount: deploy/mpijob/render.py, kernel_log_caps.
        "securityContext": {"capabilities": {"add": ["SYSLOG"]}},
    }
    label = {
        "name": "label",
        "image": a.kubectl_image,
        "imagePullPolicy": "IfNotPresent",
        # $(NODE_NAME) is expanded by the kubelet: no shell is needed in the kubectl image.
        "command": [
            "kubectl",
            "patch",
            "node",
            "$(NODE_NAME)",
            "--type",
            "merge",
            "--patch-file",
            a.status_dir + "/patch.json",
        ],
        "env": env[:1],
        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
        "volumeMounts": [status],
    }
    hold = {
        "name": "hold",
        "image": a.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sleep", "infinity"],
        "resources": {"requests": {"cpu": "1m", "memory": "8Mi"}, "limits": {"memory": "32Mi"}},
        "volumeMounts": [status],  # the reports stay readable: kubectl exec ... -c hold -- cat ...
    }
    pod = {
        "serviceAccountName": a.name,
        "initContainers": [check, label],
        "containers": [hold],
        "volumes": [
            {"name": "status", "emptyDir": {}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": a.shm_size}},
        ],
        "nodeSelector": dict(a.node_selector),
        "tolerations": a.tolerations,
    }
    if a.priority_class:
        pod["priorityClassName"] = a.priority_class
    if a.runtime_class:
        pod["runtimeClassName"] = a.runtime_class
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": a.name, "namespace": a.namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            # One node at a time is re-checked when the template changes, never all GPUs of the cluster at once.
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


def objects(a):
    meta = {"name": a.name, "labels": {"app.kubernetes.io/name": "gpuaccept"}}
    ns_meta = dict(meta, namespace=a.namespace)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": a.namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": ns_meta},
        # Nodes are cluster-scoped: a ClusterRole. RBAC cannot narrow it to the pod's own node.
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta,
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": a.name},
            "subjects": [{"kind": "ServiceAccount", "name": a.name, "namespace": a.namespace}],
        },
        daemonset(a),
    ]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--image", default="gpuaccept:latest", help="image built from deploy/container/Dockerfile")
    p.add_argument(
        "--kubectl-image",
        default="registry.k8s.io/kubectl:v1.34.0",
        help="image with kubectl for the label container [registry.k8s.io/kubectl:v1.34.0]",
    )
    p.add_argument("--gpus-per-node", type=int, default=8, help="ranks = GPUs checked per node [8]")
    p.add_argument(
        "--request-gpus",
        action="store_true",
        help="request the GPUs (nvidia.com/gpu) instead of NVIDIA_VISIBLE_DEVICES=all; the pod then "
        "holds them while it sleeps",
    )
    p.add_argument(
        "--cpu-only",
        action="store_true",
        help="nodes without GPUs: the host paths, no GPUs expected [gpuaccept run --expect-gpus " "--gpus-per-node]",
    )
    p.add_argument("--name", default="gpuaccept-node-check", help="name of every object [gpuaccept-node-check]")
    p.add_argument("--namespace", default="gpuaccept", help="namespace, rendered as an object too [gpuaccept]")
    p.add_argument(
        "--node-selector",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="nodes to check (repeatable) [nvidia.com/gpu.present=true]",
    )
    p.add_argument(
        "--toleration",
        action="append",
        default=[],
        metavar="KEY[=VALUE]:EFFECT",
        help="tolerate this taint too (repeatable); gpuaccept's own and nvidia.com/gpu are tolerated",
    )
    p.add_argument("--priority-class", help="priorityClassName [none]")
    p.add_argument("--runtime-class", help="runtimeClassName, e.g. nvidia [the node's default]")
    p.add_argument(
        "--node-check",
        action="store_true",
        help="the fast node check (gpuaccept node-check --health: node_health alone, seconds) instead "
        "of gpuaccept run; --args then go to node_health",
    )
    p.add_argument("--args", default="", help="extra arguments for gpuaccept run, e.g. --args='--quick'")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="environment (repeatable)")
    p.add_argument("--cpu", default="4", help="CPU request of the check [4]")
    p.add_argument("--memory", default="16Gi", help="memory request of the check; the limit adds --shm-size [16Gi]")
    p.add_argument("--shm-size", default="16Gi", help="memory-backed /dev/shm [16Gi]")
    p.add_argument("--prefix", default="/opt/gpuaccept", help="install prefix in the image [/opt/gpuaccept]")
    p.add_argument(
        "--status-dir", default="/var/run/gpuaccept", help="where reports and the patch go [/var/run/gpuaccept]"
    )
    p.add_argument("--examples", metavar="DIR", help="write {} into DIR, then exit".format(EXAMPLE))
    a = p.parse_args(argv)
    if a.gpus_per_node < 1:
        p.error("--gpus-per-node must be at least 1")
    return a


def with_defaults(a):
    """Parses the structured options; raises Refused for what the API would reject."""
    a = argparse.Namespace(**vars(a))
    if a.cpu_only and a.request_gpus:
        raise Refused("--cpu-only and --request-gpus: a node without GPUs requests none")
    check_dns1123_label("--name", a.name)
    check_dns1123_label("--namespace", a.namespace)
    check_subdomains((("--priority-class", a.priority_class), ("--runtime-class", a.runtime_class)))
    a.node_selector = [
        parse_key_value("--node-selector", t)
        for t in (a.node_selector if a.node_selector is not None else ["nvidia.com/gpu.present=true"])
    ]
    check_node_selector(a.node_selector)
    a.env = [parse_key_value("--env", t) for t in a.env]
    check_env_names(a.env)
    # A node that failed carries gpuaccept's taint and must be checkable again; GPU nodes often carry
    # nvidia.com/gpu:NoSchedule to keep other pods off.
    a.tolerations = [
        {"key": VERDICT_KEY, "operator": "Exists", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    a.tolerations += [parse_toleration(t) for t in a.toleration]
    check_quantities((("--cpu", a.cpu), ("--memory", a.memory), ("--shm-size", a.shm_size)))
    a.memory_limit = memory_limit(a.memory, a.shm_size)
    a.args_quoted = quote_args(a.args)
    return a


def render(argv):
    """The manifest (every object) for a command line, as text. Raises Refused."""
    return "".join(to_yaml(o) for o in objects(with_defaults(parse_args(argv))))


def write_example(a):
    text = "".join(to_yaml(o) for o in objects(with_defaults(a)))
    with open(os.path.join(a.examples, EXAMPLE), "w") as f:
        f.write("# Rendered by deploy/daemonset/render.py; do not edit.\n" + text)


def main(argv):
    return render_main(argv, parse_args, render, write_example)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
