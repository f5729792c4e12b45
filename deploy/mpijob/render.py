#!/usr/bin/env python3
"""Renders a Kubeflow MPIJob (kubeflow.org/v2beta1) that runs gpuaccept, so nobody hand-edits YAML.

    render.py --nodes 4 --gpus-per-node 8 --image registry.example/gpuaccept:1.0 > job.yaml
    render.py --program allreduce_bw --variant rdma --nodes 16 --gpus-per-node 8 --image ... > job.yaml
    render.py --examples deploy/mpijob/manifests      # rewrites the committed example manifests

Variants: default (pod network), rdma (InfiniBand/RoCE device plugin resource, IPC_LOCK, optional
Multus network), hostnetwork (pods on the nodes' network; sshd moves off port 22). Python 3 standard
library only: it runs wherever kubectl does. See docs/deployment.md.
"""
import argparse
import json
import os
import re
import sys

# The suite's programs, in run order: read from the front-end's registry, the one table that names them.
# This script runs where nothing is built, so it reads the C source; ctest suite.programs_registry holds
# what it reads to `gpuaccept run --list-programs`.
REGISTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "launch", "programs.c")


def read_programs(path=REGISTRY):
    try:
        with open(path) as f:
            names = re.findall(r'^\s*\{\s*\.name\s*=\s*"([a-z0-9_]+)"', f.read(), re.M)
    except OSError as e:
        sys.exit("render.py: cannot read the program registry {}: {} (run render.py from a checkout of the "
                 "repository)".format(path, e.strerror))
    if not names:
        sys.exit("render.py: no programs found in {}".format(path))
    return names


PROGRAMS = read_programs()
VARIANTS = ["default", "rdma", "hostnetwork"]


def launcher_script(a, programs):
    """The launcher's shell command. The operator has written the hostfile and set
    OMPI_MCA_orte_default_hostfile before this runs; ranks fill each worker's slots in hostfile order."""
    forwarded = " ".join(["-x " + name for name, _ in launcher_env(a) if not name.startswith("OMPI_")] +
                         ["-x GPUACCEPT_RUN_ID"])
    return """set -u
# One run id for every program of this job: gpuaccept merge merges one run's reports and refuses a mix.
export GPUACCEPT_RUN_ID=${{GPUACCEPT_RUN_ID:-mpijob-$(hostname)-$(date +%s)}}
hostfile=${{OMPI_MCA_orte_default_hostfile:-/etc/mpi/hostfile}}
# Workers can be Ready before their DNS records exist; mpirun would then fail on ssh. Wait, bounded.
for h in $(awk '{{print $1}}' "$hostfile"); do
  n=0
  until getent hosts "$h" >/dev/null; do
    n=$((n + 1)); [ "$n" -le {wait} ] || {{ echo "gpuaccept: worker $h does not resolve" >&2; exit 3; }}
    sleep 2
  done
done
status=0
for p in {programs}; do
  rc=0
  mpirun -np {np} --bind-to none {fwd} {bin}/"$p" --report-dir {rd}{args} || rc=$?
  [ "$status" -ne 0 ] || status=$rc  # the first failure decides the launcher's exit status
done
# Rank 0 wrote the reports on the first worker: merge them there into the suite's one verdict
# (summary.json/.md/.html), then print them into this log, which outlives the workers. The launcher's exit
# status (the Kubernetes job's) is that verdict (a baseline regression is 1); a step that died without a
# report is no finding of the merge, so then the first failing step's status stands.
first=$(awk 'NR==1 {{print $1}}' "$hostfile")
verdict=0
mpirun -np 1 --host "$first" {bin}/gpuaccept merge --report-dir {rd} || verdict=$?
mpirun -np 1 --host "$first" sh -c 'for f in {rd}/*.json {rd}/summary.md; do [ -e "$f" ] || continue; echo "=== gpuaccept report $f"; cat "$f"; echo "=== end"; done'
[ "$verdict" -eq 0 ] || status=$verdict
exit "$status"
""".format(wait=a.dns_wait // 2, programs=" ".join(programs), np=a.nodes * a.slots, fwd=forwarded,
           bin=a.prefix + "/bin", rd=a.report_dir, args=(" " + a.args) if a.args else "")


def launcher_env(a):
    """(name, value) pairs for the launcher; mpirun forwards all but OMPI_* ones to every rank with -x,
    because processes started over ssh do not see the worker pod's environment."""
    env = [("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")]
    if a.ssh_port != 22:
        env.append(("OMPI_MCA_plm_rsh_args", "-p {}".format(a.ssh_port)))
    if a.socket_ifname:
        env.append(("NCCL_SOCKET_IFNAME", a.socket_ifname))
    env.append(("NCCL_DEBUG", "WARN"))
    if a.variant == "rdma":
        env.append(("NCCL_IB_DISABLE", "0"))
        if a.ib_hca:
            env.append(("NCCL_IB_HCA", a.ib_hca))
    else:
        # Without RDMA devices in the pod NCCL would still probe for them; say what we mean.
        env.append(("NCCL_IB_DISABLE", "1"))
    return env


def pod_spec(a, container, extra_volumes=()):
    spec = {"containers": [container],
            "volumes": [{"name": "reports", "persistentVolumeClaim": {"claimName": a.report_pvc}}
                        if a.report_pvc else {"name": "reports", "emptyDir": {}}] + list(extra_volumes)}
    if a.variant == "hostnetwork":
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"  # keeps the operator's worker names resolvable
    return spec


def pod_template(a, spec):
    if a.variant == "rdma" and a.rdma_network:
        return {"metadata": {"annotations": {"k8s.v1.cni.cncf.io/networks": a.rdma_network}}, "spec": spec}
    return {"spec": spec}


def mpijob(a, program):
    programs = PROGRAMS if program == "suite" else [program]
    name = a.name or "gpuaccept" + ("" if program == "suite" else "-" + program.replace("_", "-"))
    reports_mount = {"name": "reports", "mountPath": a.report_dir}
    launcher = {
        "name": "launcher", "image": a.image, "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/bash", "-c", launcher_script(a, programs)],
        "env": [{"name": k, "value": v} for k, v in launcher_env(a)],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "volumeMounts": [reports_mount],
    }
    worker_limits = {} if a.cpu_only else {"nvidia.com/gpu": a.gpus_per_node}
    if a.variant == "rdma":
        worker_limits[a.rdma_resource] = 1
    worker = {
        "name": "worker", "image": a.image, "imagePullPolicy": "IfNotPresent",
        "command": ["/usr/sbin/sshd", "-De", "-p", str(a.ssh_port)],
        "resources": {"limits": worker_limits} if worker_limits else {},
        # NCCL puts its intra-node buffers in /dev/shm; a container's default is 64 MiB.
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, reports_mount],
    }
    if a.variant == "rdma":
        worker["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}  # RDMA pins memory
    dshm = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": a.shm_size}}
    labels = {"app.kubernetes.io/name": "gpuaccept", "app.kubernetes.io/component": program.replace("_", "-")}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": dict({"name": name, "labels": labels}, **({"namespace": a.namespace} if a.namespace else {})),
        "spec": {
            "slotsPerWorker": a.slots,
            "mpiImplementation": "OpenMPI",
            # The launcher starts only once every worker is Ready (sshd up), not racing them.
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {
                "cleanPodPolicy": "Running",  # workers go when the job ends; the launcher's log stays
                "ttlSecondsAfterFinished": a.ttl,
                "activeDeadlineSeconds": a.deadline,
                "backoffLimit": 0,  # an acceptance run that failed is a result, not a reason to retry
            },
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never",
                             "template": pod_template(a, pod_spec(a, launcher))},
                "Worker": {"replicas": a.nodes, "restartPolicy": "Never",
                           "template": pod_template(a, pod_spec(a, worker, [dshm]))},
            },
        },
    }


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
        # A literal block keeps the launcher script readable in `kubectl get -o yaml`.
        return "|\n" + "\n".join((" " * indent + l) if l else "" for l in x.rstrip("\n").split("\n"))
    return scalar(x)


def to_yaml(obj):
    return "---\n" + "\n".join(emit(obj)) + "\n"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--program", default="suite", choices=["suite"] + PROGRAMS)
    p.add_argument("--variant", default="default", choices=VARIANTS)
    p.add_argument("--nodes", type=int, default=2, help="worker pods, one per node [2]")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per worker = ranks per worker [8]")
    p.add_argument("--cpu-only", action="store_true", help="request no GPUs; ranks per worker = --gpus-per-node")
    p.add_argument("--image", default="gpuaccept:latest", help="image built from deploy/container/Dockerfile")
    p.add_argument("--name", help="MPIJob name [gpuaccept or gpuaccept-<program>]")
    p.add_argument("--namespace", help="metadata.namespace [none: kubectl's current namespace]")
    p.add_argument("--args", default="", help="extra arguments for every program, e.g. --args='--quick --timeout 300'")
    p.add_argument("--prefix", default="/opt/gpuaccept", help="install prefix in the image [/opt/gpuaccept]")
    p.add_argument("--report-dir", default="/reports", help="report directory in the pods [/reports]")
    p.add_argument("--report-pvc", help="ReadWriteMany PersistentVolumeClaim to keep reports in [none]")
    p.add_argument("--shm-size", default="16Gi", help="memory-backed /dev/shm per worker [16Gi]")
    p.add_argument("--socket-ifname", help="NCCL_SOCKET_IFNAME [eth0; none with hostnetwork]")
    p.add_argument("--rdma-resource", default="rdma/rdma_shared_device_a",
                   help="device plugin resource for RDMA (rdma variant) [rdma/rdma_shared_device_a]")
    p.add_argument("--rdma-network", help="Multus network attachment for RDMA (rdma variant) [none]")
    p.add_argument("--ib-hca", help="NCCL_IB_HCA, e.g. mlx5 (rdma variant) [NCCL's choice]")
    p.add_argument("--ssh-port", type=int, help="workers' sshd port [22; 2222 with hostnetwork]")
    p.add_argument("--ttl", type=int, default=3600, help="runPolicy.ttlSecondsAfterFinished [3600]")
    p.add_argument("--deadline", type=int, default=7200, help="runPolicy.activeDeadlineSeconds [7200]")
    p.add_argument("--dns-wait", type=int, default=120, help="seconds the launcher waits for worker DNS [120]")
    p.add_argument("--examples", metavar="DIR", help="write every program and variant into DIR, then exit")
    a = p.parse_args(argv)
    for opt in ("nodes", "gpus_per_node", "ttl", "deadline", "dns_wait"):
        if getattr(a, opt) < 1:
            p.error("--{} must be at least 1".format(opt.replace("_", "-")))
    return a


def with_defaults(a):
    """Fills the defaults that depend on the variant; returns a copy."""
    a = argparse.Namespace(**vars(a))
    a.slots = a.gpus_per_node
    if a.ssh_port is None:
        # On the host network port 22 belongs to the node's own sshd.
        a.ssh_port = 2222 if a.variant == "hostnetwork" else 22
    if a.socket_ifname is None and a.variant != "hostnetwork":
        a.socket_ifname = "eth0"  # a pod's interface; on the host network only the site knows the name
    return a


def render(argv):
    """The manifest for a command line, as text."""
    a = parse_args(argv)
    return to_yaml(mpijob(with_defaults(a), a.program))


def main(argv):
    a = parse_args(argv)
    if not a.examples:
        sys.stdout.write(render(argv))
        return 0
    # The committed examples: every program on the default network, the suite in every variant.
    jobs = [(p, "default") for p in ["suite"] + PROGRAMS] + [("suite", v) for v in VARIANTS[1:]]
    os.makedirs(a.examples, exist_ok=True)
    for program, variant in jobs:
        a.variant = variant
        fname = program + ("" if variant == "default" else "-" + variant) + ".yaml"
        with open(os.path.join(a.examples, fname), "w") as f:
            f.write("# Rendered by deploy/mpijob/render.py --program {} --variant {}; do not edit.\n"
                    .format(program, variant))
            f.write(to_yaml(mpijob(with_defaults(a), program)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
