#!/usr/bin/env python3
"""Renders a Kubeflow MPIJob (kubeflow.org/v2beta1) that runs gpuaccept, so nobody hand-edits YAML.

    render.py --nodes 4 --gpus-per-node 8 --image registry.example/gpuaccept:1.0 > job.yaml
    render.py --program allreduce_bw --nodes 16 --gpus-per-node 8 --rdma-resource nvidia.com/hca=8 ... > job.yaml
    render.py --examples deploy/mpijob/manifests      # rewrites the committed example manifests

NCCL goes between nodes over InfiniBand (or RoCE) by default: every pod gets the RDMA device plugin's resource
(--rdma-resource, whose devices the plugin puts in the pod), IPC_LOCK (RDMA pins memory), an optional Multus
network; --no-ib runs over sockets instead, and tells gpuaccept run that it is intended (--allow-sockets).
Variants: default (pod network), hostnetwork (pods on the nodes' network; sshd moves off port 22); rdma is
the default's old name. Python 3 standard library only: it runs wherever kubectl does. See docs/deployment.md.
"""
import argparse
import json
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True  # run from a checkout: leave no __pycache__ in deploy/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from k8s_common import (
    DNS1035_LABEL,
    Refused,
    read_programs,
    check_dns1123_label,
    check_env_names,  # noqa: E402
    check_node_selector,
    check_quantities,
    check_subdomains,
    memory_limit,
    node_name_env,
    parse_key_value,
    parse_toleration,
    quote_args,
    render_main,
    to_yaml,
    NODE_NAME_ENV,
)

# The suite's programs, in run order (k8s_common.read_programs: the registry's data file).
PROGRAMS = read_programs()
VARIANTS = ["default", "hostnetwork"]
OLD_VARIANTS = {"rdma": "default"}  # before InfiniBand was the default, "rdma" asked for it


def launcher_script(a, programs):
    """The launcher's shell command. The operator has written the hostfile and set
    OMPI_MCA_orte_default_hostfile before this runs. With runLauncherAsWorker the launcher pod is the hostfile's
    first host, so rank 0 (which writes every report) runs here and `gpuaccept run` reads its reports where it
    stands; its exit status, the merged verdict, is the pod's and so the job's."""
    run = [a.prefix + "/bin/gpuaccept", "run", "--report-dir", a.report_dir]
    if programs != PROGRAMS:
        run += ["--only", ",".join(programs)]
    if not a.cpu_only:
        run += ["--expect-gpus", str(a.gpus_per_node)]  # a pod whose GPUs are invisible fails, not warns
    if a.no_ib:
        run += ["--allow-sockets"]  # sockets between nodes are intended: said in the summary, not failed
    run_line = " ".join(shlex.quote(w) for w in run) + ((" " + a.args_quoted) if a.args_quoted else "")
    port = (
        ""
        if a.ssh_port == 22
        else """# sshd listens on {p}. Not in the env: the operator appends its own OMPI_MCA_plm_rsh_args (ssh's
# ConnectionAttempts) after the manifest's, and the kubelet keeps the last of two equal names.
export OMPI_MCA_plm_rsh_args="-p {p}${{OMPI_MCA_plm_rsh_args:+ $OMPI_MCA_plm_rsh_args}}"
""".format(
            p=a.ssh_port
        )
    )
    return """set -u
{port}# One run id for every program of this job: gpuaccept merge merges one run's reports and refuses a mix.
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
# The one runner: program order, step timeouts, per-node preflight, suite_run.json, the merged summary.
verdict=0
{run} || verdict=$?
# The reports stay in the reports volume (rank 0 wrote them here); only summary.md goes into the log, which
# outlives the pods. Every report is tens of MB at 512 nodes: past the kubelet's 10 MiB log rotation
# (containerLogMaxSize), which would keep the reports' tail and drop the verdict.
if [ -e {rd}/summary.md ]; then echo "=== gpuaccept report {rd}/summary.md"; cat {rd}/summary.md; echo "=== end"; fi
echo "gpuaccept: {where}"
echo "gpuaccept: verdict exit $verdict"
exit "$verdict"
""".format(
        port=port,
        wait=a.dns_wait // 2,
        run=run_line,
        rd=shlex.quote(a.report_dir),
        where=(
            "reports (summary.json, summary.html, one JSON per program) kept in the claim %s at %s"
            % (a.report_pvc, a.report_dir)
        )
        if a.report_pvc
        else (
            "reports (summary.json, summary.html, one JSON per program) in this pod's %s, lost with the pod: "
            "render with --report-pvc CLAIM to keep them" % a.report_dir
        ),
    )


def launcher_env(a):
    """(name, value) pairs for the launcher. `gpuaccept run` forwards NCCL_*, UCX_* and GPUACCEPT_* ones to
    the ranks with mpirun -x (processes started over ssh do not see the pod's environment); --env names outside
    those go through Open MPI's mca_base_env_list, its -x by environment."""
    env = [] if a.non_root else [("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")]
    if a.socket_ifname:
        env.append(("NCCL_SOCKET_IFNAME", a.socket_ifname))
    env.append(("NCCL_DEBUG", "WARN"))
    if a.no_ib:
        # Without RDMA devices in the pod NCCL would still probe for them; say what we mean.
        env.append(("NCCL_IB_DISABLE", "1"))
    else:
        env.append(("NCCL_IB_DISABLE", "0"))
        if a.ib_hca:
            env.append(("NCCL_IB_HCA", a.ib_hca))
    if a.ib_gid_index is not None:
        env.append(("NCCL_IB_GID_INDEX", str(a.ib_gid_index)))  # RoCE: which GID carries RoCEv2
    user = [kv for kv in a.env]
    names = {k for k, _ in env}
    env = [(k, v) for k, v in env if k not in {n for n, _ in user}] + user  # --env wins over a default
    extra = [k for k, _ in user if not FORWARDED.match(k) and not k.startswith("OMPI_") and k not in names]
    if extra:
        env.append(("OMPI_MCA_mca_base_env_list", ";".join(extra)))
    return env


# What suite/run/launch_plan.c forwards by itself (its forwarded()); keep the two in step.
FORWARDED = re.compile(r"^(NCCL_|UCX_|GPUACCEPT_|OMP_NUM_THREADS$|OPENBLAS_NUM_THREADS$|LD_LIBRARY_PATH$)")


def pod_spec(a, container, name, extra_volumes=(), pvc=True):
    """pvc: whether --report-pvc backs the reports here (the launcher, where rank 0 writes them); workers keep an
    emptyDir at the same path, so a ReadWriteOnce claim is enough."""
    spec = {
        "containers": [container],
        "volumes": [
            {"name": "reports", "persistentVolumeClaim": {"claimName": a.report_pvc}}
            if a.report_pvc and pvc
            else {"name": "reports", "emptyDir": {}}
        ]
        + list(extra_volumes),
    }
    if a.variant == "hostnetwork":
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"  # keeps the operator's worker names resolvable
    if a.node_selector:
        spec["nodeSelector"] = dict(a.node_selector)
    spec["affinity"] = one_pod_per_node(a, name)
    if a.tolerations:
        spec["tolerations"] = a.tolerations
    if a.priority_class:
        spec["priorityClassName"] = a.priority_class
    if a.scheduler_name:
        spec["schedulerName"] = a.scheduler_name
    if a.non_root:
        # The operator mounts the job's ssh keys at sshAuthMountPath; fsGroup makes the volumes writable.
        spec["securityContext"] = {
            "runAsUser": a.run_as_user,
            "runAsGroup": a.run_as_user,
            "fsGroup": a.run_as_user,
            "runAsNonRoot": True,
        }
    return spec


# The label every pod of one job carries (launcher and workers: the launcher is a node too), which the
# anti-affinity below selects on. Our own label, not the operator's, so the rule holds whatever the operator
# version labels its pods with.
JOB_LABEL = "gpuaccept.io/job"


def one_pod_per_node(a, name):
    """Pod anti-affinity: no two pods of this job on one node (topologyKey kubernetes.io/hostname), as a
    requirement, not a preference. Two pods on one machine would make a "pair of nodes" that is one machine:
    allreduce_bw's inter-node figures would be shared memory, and a fault would be blamed twice (issue 41,
    item 8). With --affinity-file, its own terms are kept and this one is added."""
    term = {"labelSelector": {"matchLabels": {JOB_LABEL: name}}, "topologyKey": "kubernetes.io/hostname"}
    affinity = json.loads(json.dumps(a.affinity)) if a.affinity else {}
    anti = affinity.setdefault("podAntiAffinity", {})
    anti.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
    return affinity


def pod_template(a, spec, name):
    meta = {"labels": {"app.kubernetes.io/name": "gpuaccept", JOB_LABEL: name}}
    if not a.no_ib and a.rdma_network:
        meta["annotations"] = {"k8s.v1.cni.cncf.io/networks": a.rdma_network}
    return {"metadata": meta, "spec": spec}


def gpu_resources(a):
    """Requests and limits of a pod that runs ranks: the GPUs, and CPU and memory requests so the pod is not
    BestEffort (the first evicted). The memory limit is the request plus /dev/shm, since a memory-backed
    emptyDir is charged to the pod's memory."""
    limits = {} if a.cpu_only else {"nvidia.com/gpu": a.gpus_per_node}
    if not a.no_ib:
        for name, count in a.rdma_resources:  # the RDMA device plugin mounts its devices for these
            limits[name] = count
    limits["memory"] = memory_limit(a.memory, a.shm_size)
    return {"requests": {"cpu": a.cpu, "memory": a.memory}, "limits": limits}


def kernel_log_caps(programs):
    """SYSLOG where node_health runs: its Xid check reads the kernel log, which kernel.dmesg_restrict=1 (Ubuntu's
    default) keeps from a process without CAP_SYSLOG, through /dev/kmsg and syslog(2) alike (the kernel's
    Documentation/admin-guide/sysctl/kernel.rst, "dmesg_restrict"; kernel/printk/printk.c,
    check_syslog_permissions). A container has no /dev/kmsg, so node_health falls back to dmesg, i.e. syslog(2),
    which the runtimes' default seccomp profile allows only with CAP_SYSLOG (moby commit ccd22ff, containerd
    f81ce26). The capability is effective for a root process only: a --non-root pod reads the log where
    dmesg_restrict=0, else the node is reported with its Xids unchecked (docs/deployment.md)."""
    return ["SYSLOG"] if "node_health" in programs else []


def job_run_policy(a):
    """The MPIJob's runPolicy: clean-up, time limits, no retry, and the gang when asked for."""
    run_policy = {
        "cleanPodPolicy": "Running",  # workers go when the job ends; the launcher's log stays
        "ttlSecondsAfterFinished": a.ttl,
        "activeDeadlineSeconds": a.deadline,
        "backoffLimit": 0,  # an acceptance run that failed is a result, not a reason to retry
    }
    if a.scheduling_policy:
        # Gang scheduling: every pod of the job or none, so half a job never holds GPUs waiting for the rest.
        policy = {"minAvailable": a.nodes}
        if a.queue:
            policy["queue"] = a.queue
        if a.priority_class:
            policy["priorityClass"] = a.priority_class
        run_policy["schedulingPolicy"] = policy
    return run_policy


def mpijob(a, program):
    programs = PROGRAMS if program == "suite" else [program]
    name = a.name or "gpuaccept" + ("" if program == "suite" else "-" + program.replace("_", "-"))
    reports_mount = {"name": "reports", "mountPath": a.report_dir}
    # NCCL puts its intra-node buffers in /dev/shm; a container's default is 64 MiB.
    rank_mounts = [{"name": "dshm", "mountPath": "/dev/shm"}, reports_mount]
    launcher = {
        "name": "launcher",
        "image": a.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/bash", "-c", launcher_script(a, programs)],
        # The node's name: rank 0 runs here, started by mpirun itself, and inherits it.
        "env": [node_name_env()] + [{"name": k, "value": v} for k, v in launcher_env(a)],
        # The launcher is the first node of the job (runLauncherAsWorker): it holds GPUs and runs rank 0.
        "resources": gpu_resources(a),
        "volumeMounts": rank_mounts,
    }
    worker = {
        "name": "worker",
        "image": a.image,
        "imagePullPolicy": "IfNotPresent",
        # Ranks here are started over ssh and see sshd's session environment, not the pod's: SetEnv (sshd_config,
        # OpenSSH 7.8+) hands them the node's name, which the kubelet expands from the env below.
        "command": ["/usr/sbin/sshd", "-De", "-o", "SetEnv={0}=$({0})".format(NODE_NAME_ENV), "-p", str(a.ssh_port)],
        "env": [node_name_env()],
        "resources": gpu_resources(a),
        "volumeMounts": rank_mounts,
    }
    for c in (launcher, worker):
        sc = {}
        caps = [] if a.no_ib else ["IPC_LOCK"]  # RDMA pins memory
        caps += kernel_log_caps(programs)
        if caps:
            sc["capabilities"] = {"add": caps}
        if a.non_root:
            sc["allowPrivilegeEscalation"] = False
        if sc:
            c["securityContext"] = sc
    dshm = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": a.shm_size}}
    labels = {"app.kubernetes.io/name": "gpuaccept", "app.kubernetes.io/component": program.replace("_", "-")}
    run_policy = job_run_policy(a)
    replicas = {
        "Launcher": {
            "replicas": 1,
            "restartPolicy": "Never",
            "template": pod_template(a, pod_spec(a, launcher, name, [dshm]), name),
        }
    }
    if a.nodes > 1:
        replicas["Worker"] = {
            "replicas": a.nodes - 1,
            "restartPolicy": "Never",
            "template": pod_template(a, pod_spec(a, worker, name, [dshm], pvc=False), name),
        }
    spec = {
        "slotsPerWorker": a.slots,
        # The launcher pod is the hostfile's first host, so rank 0 and its reports are where gpuaccept run is.
        "runLauncherAsWorker": True,
        "mpiImplementation": "OpenMPI",
        # The launcher starts only once every worker is Ready (sshd up), not racing them.
        "launcherCreationPolicy": "WaitForWorkersReady",
        "runPolicy": run_policy,
        "mpiReplicaSpecs": replicas,
    }
    if a.non_root:
        spec["sshAuthMountPath"] = a.ssh_auth_mount_path
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": dict({"name": name, "labels": labels}, **({"namespace": a.namespace} if a.namespace else {})),
        "spec": spec,
    }


def check_names(a, program):
    """Refuses what the API server would: exit 2 from main, one line."""
    name = a.name or "gpuaccept" + ("" if program == "suite" else "-" + program.replace("_", "-"))
    # Pods are <name>-launcher and <name>-worker-<i>, and the job's Service is <name>: DNS-1035 labels.
    longest = "{}-worker-{}".format(name, max(a.nodes - 2, 0))
    if not DNS1035_LABEL.match(name) or len(longest) > 63:
        raise Refused(
            "--name '{}': must be lower-case letters, digits and '-', start with a letter, end "
            "alphanumeric, and leave '{}' within 63 characters".format(name, longest)
        )
    if a.namespace:
        check_dns1123_label("--namespace", a.namespace)
    check_subdomains(
        (("--priority-class", a.priority_class), ("--report-pvc", a.report_pvc), ("--scheduler-name", a.scheduler_name))
    )
    check_node_selector(a.node_selector)
    check_env_names(a.env)
    check_quantities((("--cpu", a.cpu), ("--memory", a.memory), ("--shm-size", a.shm_size)))
    if a.non_root and a.ssh_port < 1024:
        raise Refused(
            "--non-root: sshd cannot bind port {} without root; use --ssh-port 1024 or above".format(a.ssh_port)
        )


def add_placement_options(p):
    """Where the pods may run and how they are scheduled: selectors, tolerations, affinity, the gang."""
    p.add_argument(
        "--node-selector",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only nodes with this label (repeatable)",
    )
    p.add_argument(
        "--toleration",
        action="append",
        default=[],
        metavar="KEY[=VALUE]:EFFECT",
        help="tolerate this taint (repeatable)",
    )
    p.add_argument(
        "--no-default-toleration",
        action="store_true",
        help="do not tolerate gpuaccept's own taint ({}:NoSchedule)".format(ACCEPTANCE_TAINT),
    )
    p.add_argument("--affinity-file", help="JSON file with a pod affinity object (nodeAffinity, ...) [none]")
    p.add_argument("--priority-class", help="priorityClassName of the pods (and of the gang) [none]")
    p.add_argument(
        "--scheduling-policy",
        action="store_true",
        help="gang scheduling: runPolicy.schedulingPolicy with minAvailable = --nodes",
    )
    p.add_argument("--queue", help="schedulingPolicy.queue (Volcano) [none]")
    p.add_argument("--scheduler-name", help="schedulerName of the pods, e.g. volcano [the default scheduler]")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--program", default="suite", choices=["suite"] + PROGRAMS)
    p.add_argument(
        "--variant",
        default="default",
        choices=VARIANTS + sorted(OLD_VARIANTS),
        help="default (pod network) or hostnetwork; rdma: the default's old name [default]",
    )
    p.add_argument(
        "--no-ib",
        action="store_true",
        help="NCCL between nodes over sockets (NCCL_IB_DISABLE=1, no RDMA resource), declared "
        "intended to gpuaccept run (--allow-sockets) [InfiniBand/RoCE through the RDMA device plugin]",
    )
    p.add_argument("--nodes", type=int, default=2, help="nodes = pods: the launcher (rank 0) and nodes-1 workers [2]")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per pod = ranks per pod [8]")
    p.add_argument("--cpu-only", action="store_true", help="request no GPUs; ranks per pod = --gpus-per-node")
    p.add_argument("--image", default="gpuaccept:latest", help="image built from deploy/container/Dockerfile")
    p.add_argument("--name", help="MPIJob name [gpuaccept or gpuaccept-<program>]")
    p.add_argument("--namespace", help="metadata.namespace [none: kubectl's current namespace]")
    p.add_argument(
        "--args",
        default="",
        help="extra arguments for gpuaccept run, split and quoted as a shell "
        "would, e.g. --args='--quick --step-timeout 300'",
    )
    p.add_argument("--prefix", default="/opt/gpuaccept", help="install prefix in the image [/opt/gpuaccept]")
    p.add_argument("--report-dir", default="/reports", help="report directory in the pods [/reports]")
    p.add_argument("--report-pvc", help="PersistentVolumeClaim to keep reports in [none: an emptyDir]")
    p.add_argument("--shm-size", default="16Gi", help="memory-backed /dev/shm per pod [16Gi]")
    p.add_argument("--cpu", default="8", help="CPU request per pod [8]")
    p.add_argument("--memory", default="32Gi", help="memory request per pod; the limit adds --shm-size [32Gi]")
    add_placement_options(p)
    p.add_argument(
        "--non-root",
        action="store_true",
        help="run as --run-as-user, ssh keys at " "--ssh-auth-mount-path, sshd on --ssh-port (2222 unless given)",
    )
    p.add_argument("--run-as-user", type=int, default=1000, help="UID (and GID, fsGroup) with --non-root [1000]")
    p.add_argument(
        "--ssh-auth-mount-path",
        default="/home/mpiuser/.ssh",
        help="sshAuthMountPath with --non-root [/home/mpiuser/.ssh]",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment for the launcher and every rank (repeatable)",
    )
    p.add_argument("--socket-ifname", help="NCCL_SOCKET_IFNAME [eth0; none with hostnetwork]")
    p.add_argument(
        "--rdma-resource",
        action="append",
        default=[],
        metavar="NAME[=COUNT]",
        help="RDMA device plugin resource per pod, repeatable, e.g. nvidia.com/hca=8 (SR-IOV) "
        "[rdma/rdma_shared_device_a=1]",
    )
    p.add_argument("--rdma-network", help="Multus network attachment for RDMA [none]")
    p.add_argument("--ib-hca", help="NCCL_IB_HCA, e.g. mlx5 [NCCL's choice]")
    p.add_argument("--ib-gid-index", type=int, help="NCCL_IB_GID_INDEX, the RoCE GID to use, e.g. 3 [NCCL's choice]")
    p.add_argument("--ssh-port", type=int, help="workers' sshd port [22; 2222 with hostnetwork or --non-root]")
    p.add_argument("--ttl", type=int, default=3600, help="runPolicy.ttlSecondsAfterFinished [3600]")
    p.add_argument("--deadline", type=int, default=7200, help="runPolicy.activeDeadlineSeconds [7200]")
    p.add_argument("--dns-wait", type=int, default=120, help="seconds the launcher waits for worker DNS [120]")
    p.add_argument("--examples", metavar="DIR", help="write every program and variant into DIR, then exit")
    a = p.parse_args(argv)
    for opt in ("nodes", "gpus_per_node", "ttl", "deadline", "dns_wait"):
        if getattr(a, opt) < 1:
            p.error("--{} must be at least 1".format(opt.replace("_", "-")))
    return a


DEFAULT_RDMA_RESOURCE = "rdma/rdma_shared_device_a"
RESOURCE_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


def parse_resource(text):
    """NAME[=COUNT] of --rdma-resource: an extended resource name and a whole count of at least 1."""
    name, _, count = text.partition("=")
    if not RESOURCE_NAME.match(name) or "/" not in name or len(name) > 253:
        raise Refused("--rdma-resource '{}': not a device plugin resource name (domain/name)".format(text))
    if count and not (count.isdigit() and int(count) >= 1):
        raise Refused("--rdma-resource '{}': the count must be a whole number of at least 1".format(text))
    return name, int(count) if count else 1


# handoff's taint on failed nodes (suite/handoff/handoff.h SUITE_K8S_KEY): re-testing such a node must land on it.
ACCEPTANCE_TAINT = "gpuaccept.io/verdict"


def with_defaults(a):
    """Fills the defaults that depend on other options and parses the structured ones; returns a copy.
    Raises Refused for what Kubernetes would reject."""
    a = argparse.Namespace(**vars(a))
    a.variant = OLD_VARIANTS.get(a.variant, a.variant)
    a.slots = a.gpus_per_node
    a.rdma_resources = [parse_resource(r) for r in (a.rdma_resource or [DEFAULT_RDMA_RESOURCE])]
    if a.no_ib and (a.rdma_resource or a.rdma_network or a.ib_hca):
        raise Refused("--no-ib: --rdma-resource, --rdma-network and --ib-hca are for InfiniBand")
    if a.ssh_port is None:
        # On the host network port 22 belongs to the node's own sshd; a non-root sshd cannot bind it.
        a.ssh_port = 2222 if a.variant == "hostnetwork" or a.non_root else 22
    if a.socket_ifname is None and a.variant != "hostnetwork":
        a.socket_ifname = "eth0"  # a pod's interface; on the host network only the site knows the name
    if a.ib_gid_index is not None and a.ib_gid_index < 0:
        raise Refused("--ib-gid-index must be 0 or more")
    a.node_selector = [parse_key_value("--node-selector", t) for t in a.node_selector]
    a.env = [parse_key_value("--env", t) for t in a.env]
    a.tolerations = (
        [] if a.no_default_toleration else [{"key": ACCEPTANCE_TAINT, "operator": "Exists", "effect": "NoSchedule"}]
    )
    a.tolerations += [parse_toleration(t) for t in a.toleration]
    a.affinity = None
    if a.affinity_file:
        try:
            with open(a.affinity_file) as f:
                a.affinity = json.load(f)
        except (OSError, ValueError) as e:
            raise Refused("--affinity-file {}: {}".format(a.affinity_file, e))
        kinds = {"nodeAffinity", "podAffinity", "podAntiAffinity"}
        if not isinstance(a.affinity, dict) or not a.affinity or set(a.affinity) - kinds:
            raise Refused(
                "--affinity-file {}: expected a JSON object with some of {}".format(
                    a.affinity_file, ", ".join(sorted(kinds))
                )
            )
    a.args_quoted = quote_args(a.args)
    return a


def render(argv):
    """The manifest for a command line, as text. Raises Refused."""
    a = parse_args(argv)
    b = with_defaults(a)
    check_names(b, a.program)
    return to_yaml(mpijob(b, a.program))


def write_examples(a):
    """The committed examples: every program over InfiniBand on the pod network, the suite on the host
    network, and the suite over sockets (--no-ib)."""
    jobs = (
        [(p, "default", False) for p in ["suite"] + PROGRAMS]
        + [("suite", v, False) for v in VARIANTS[1:]]
        + [("suite", "default", True)]
    )
    os.makedirs(a.examples, exist_ok=True)
    for program, variant, no_ib in jobs:
        a.variant, a.no_ib = variant, no_ib
        b = with_defaults(a)
        check_names(b, program)
        fname = program + ("" if variant == "default" else "-" + variant) + ("-no-ib" if no_ib else "") + ".yaml"
        with open(os.path.join(a.examples, fname), "w") as f:
            f.write(
                "# Rendered by deploy/mpijob/render.py --program {} --variant {}{}; do not edit.\n".format(
                    program, variant, " --no-ib" if no_ib else ""
                )
            )
            f.write(to_yaml(mpijob(b, program)))


def main(argv):
    return render_main(argv, parse_args, render, write_examples)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
