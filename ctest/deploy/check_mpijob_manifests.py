#!/usr/bin/python3
"""Checks gpuaccept's MPIJob manifests against the official CRD and the operator's rules.

    check_mpijob_manifests.py SOURCE_DIR committed|rendered|negative|refused

committed: deploy/mpijob/manifests/*.yaml are valid and are exactly what render.py makes now.
rendered:  a matrix of render.py options (programs, variants, shapes, knobs) all validate.
negative:  broken copies of a valid manifest are each rejected, for the stated reason.
refused:   options the Kubernetes API would reject exit 2 with one line; --args reaches gpuaccept run word for
           word through the launcher's shell (quotes, $(...), ;, spaces), run for real with a stand-in gpuaccept.
Runs under Debian's /usr/bin/python3 (python3-yaml, python3-jsonschema).
"""
import copy
import itertools
import json
import shlex
import os
import subprocess
import sys
import tempfile

import yaml

source_dir, mode = sys.argv[1:3]
AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}
            ]
        }
    }
}
_affinity_dir = tempfile.TemporaryDirectory(prefix="ga-affinity.")  # removed at exit
AFFINITY_FILE = os.path.join(_affinity_dir.name, "affinity.json")
SCHEDULING = [
    "--node-selector",
    "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
    "--node-selector",
    "pool=gpu",
    "--toleration",
    "nvidia.com/gpu:NoSchedule",
    "--toleration",
    "dedicated=acceptance:NoExecute",
    "--affinity-file",
    AFFINITY_FILE,
    "--priority-class",
    "acceptance-high",
    "--scheduling-policy",
    "--queue",
    "acceptance",
    "--scheduler-name",
    "volcano",
    "--cpu",
    "16",
    "--memory",
    "64Gi",
    "--ib-gid-index",
    "3",
    "--env",
    "FOO=bar baz",
    "--env",
    "NCCL_NET_GDR_LEVEL=PHB",
]
mpijob_dir = os.path.join(source_dir, "deploy", "mpijob")
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, mpijob_dir)
import render  # noqa: E402
import validate_mpijob  # noqa: E402
from deploy_helpers import check, check_refused, finish, set_path, write_rendered  # noqa: E402
import deploy_helpers  # noqa: E402

crd = validate_mpijob.VENDORED_CRD  # the copy in the repository, deploy/mpijob/schema/


def caps(container):
    """The capabilities a container adds."""
    return container.get("securityContext", {}).get("capabilities", {}).get("add", [])


def validate(paths):
    return deploy_helpers.validate(os.path.join(mpijob_dir, "validate_mpijob.py"), ["--crd", crd] + paths)


def render_yaml(args):
    return render.render(args)


def committed():
    have = os.path.join(mpijob_dir, "manifests")
    names = sorted(os.listdir(have))
    with tempfile.TemporaryDirectory() as tmp:
        render.main(["--examples", tmp])
        check(sorted(os.listdir(tmp)) == names, "manifests/ holds exactly the rendered examples")
        for n in names:
            with open(os.path.join(have, n)) as a, open(os.path.join(tmp, n)) as b:
                check(a.read() == b.read(), "{} matches render.py (run render.py --examples)".format(n))
    paths = [os.path.join(have, n) for n in names]
    check(validate(paths) and len(paths) >= 8, "{} committed manifests validate".format(len(paths)))


def rendered():
    shapes = [
        ["--nodes", "1", "--gpus-per-node", "8"],
        ["--nodes", "64", "--gpus-per-node", "4"],
        ["--nodes", "2", "--gpus-per-node", "2", "--cpu-only"],
    ]
    knobs = [
        [],
        [
            "--namespace",
            "ml-infra",
            "--report-pvc",
            "gpuaccept-reports",
            "--args=--quick --timeout 300",
            "--shm-size",
            "64Gi",
            "--image",
            "registry.example.com:5000/gpuaccept:1.0",
        ],
        ["--rdma-network", "sriov-ib", "--ib-hca", "mlx5", "--socket-ifname", "bond0", "--ssh-port", "2022"],
        SCHEDULING,
        ["--non-root", "--run-as-user", "1001", "--no-default-toleration"],
        ["--no-ib", "--socket-ifname", "bond0"],
        ["--rdma-resource", "nvidia.com/hca=8"],
    ]
    with tempfile.TemporaryDirectory() as tmp:
        with open(AFFINITY_FILE, "w") as f:
            json.dump(AFFINITY, f)
        paths = write_rendered(
            tmp,
            [
                render_yaml(["--program", program, "--variant", variant] + shape + knob)
                for program, variant, shape, knob in itertools.product(
                    ["suite"] + render.PROGRAMS, render.VARIANTS, shapes, knobs
                )
            ],
        )
        check(validate(paths), "{} rendered variants validate".format(len(paths)))
        # The knobs must reach the manifest, not only parse.
        doc = yaml.safe_load(render_yaml(["--variant", "rdma"] + knobs[2]))
        worker = doc["spec"]["mpiReplicaSpecs"]["Worker"]
        check(
            worker["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "sriov-ib"
            and worker["template"]["spec"]["containers"][0]["command"][-1] == "2022"
            and "hostNetwork" not in worker["template"]["spec"],
            "rdma network annotation and ssh port reach the rendered worker",
        )
        fabric()
        node_names()
        doc = yaml.safe_load(render_yaml(["--report-pvc", "gpuaccept-reports"]))
        vols = {
            role: {v["name"]: v for v in doc["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["volumes"]}
            for role in ("Launcher", "Worker")
        }
        check(
            vols["Launcher"]["reports"]
            == {"name": "reports", "persistentVolumeClaim": {"claimName": "gpuaccept-reports"}}
            and vols["Worker"]["reports"] == {"name": "reports", "emptyDir": {}},
            "--report-pvc backs the launcher's reports (rank 0 writes there); workers keep an emptyDir",
        )
        # The scheduling knobs reach both pods (the launcher is a node too) and the run policy.
        doc = yaml.safe_load(render_yaml(["--nodes", "3"] + SCHEDULING))
        spec = doc["spec"]
        for role in ("Launcher", "Worker"):
            pod = spec["mpiReplicaSpecs"][role]["template"]["spec"]
            c = pod["containers"][0]
            env = {e["name"]: e.get("value") for e in c["env"]} if role == "Launcher" else {}
            check(
                pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "pool": "gpu"}
                and pod["affinity"]["nodeAffinity"] == AFFINITY["nodeAffinity"]
                and pod["affinity"]["podAntiAffinity"] == ONE_POD_PER_NODE
                and pod["priorityClassName"] == "acceptance-high"
                and pod["schedulerName"] == "volcano"
                and {"key": "gpuaccept.io/verdict", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
                and {"key": "dedicated", "operator": "Equal", "value": "acceptance", "effect": "NoExecute"}
                in pod["tolerations"]
                and {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
                and c["resources"]["requests"] == {"cpu": "16", "memory": "64Gi"}
                and c["resources"]["limits"]["memory"] == "{}Mi".format(64 * 1024 + 16 * 1024),
                "{}: nodeSelector, affinity, tolerations, priority, scheduler, requests, limit = 64Gi + 16Gi shm".format(
                    role
                ),
            )
            if role == "Launcher":
                check(
                    env.get("NCCL_IB_GID_INDEX") == "3"
                    and env.get("FOO") == "bar baz"
                    and env.get("NCCL_NET_GDR_LEVEL") == "PHB"
                    and env.get("OMPI_MCA_mca_base_env_list") == "FOO",
                    "launcher env: NCCL_IB_GID_INDEX, --env; FOO forwarded through mca_base_env_list: {}".format(env),
                )
        check(
            spec["runPolicy"]["schedulingPolicy"]
            == {"minAvailable": 3, "queue": "acceptance", "priorityClass": "acceptance-high"}
            and spec["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
            and spec["runLauncherAsWorker"] is True,
            "gang of 3 pods: launcher (rank 0) and 2 workers",
        )
        doc = yaml.safe_load(render_yaml(["--non-root", "--no-default-toleration"]))
        pod = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        env = {
            e["name"] for e in doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"]
        }
        check(
            doc["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"
            and pod["securityContext"] == {"runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000, "runAsNonRoot": True}
            and pod["containers"][0]["command"][-1] == "2222"
            and "tolerations" not in pod
            and "OMPI_ALLOW_RUN_AS_ROOT" not in env,
            "--non-root: sshAuthMountPath, runAsUser 1000, sshd on 2222, no run-as-root variables",
        )
        # The operator appends OMPI_MCA_plm_rsh_args to the launcher's env after the manifest's (the last of two
        # equal names wins): the port must come from the script, kept ahead of the operator's value.
        script = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][-1]
        lines = [l for l in script.splitlines() if "OMPI_MCA_plm_rsh_args=" in l]
        got = subprocess.run(
            ["bash", "-c", "\n".join(lines) + '\nprintf %s "$OMPI_MCA_plm_rsh_args"'],
            env={"OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10"},
            capture_output=True,
            text=True,
        ).stdout
        check(
            "OMPI_MCA_plm_rsh_args" not in env and got == "-p 2222 -o ConnectionAttempts=10",
            "--non-root: the launcher script gives ssh -p 2222 beside the operator's ssh options: {!r}".format(got),
        )


ONE_POD_PER_NODE = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"gpuaccept.io/job": "gpuaccept"}}, "topologyKey": "kubernetes.io/hostname"}
    ]
}
NODE_NAME = {"name": "GA_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


def node_names():
    """Issue 41, items 1 and 8: every pod that runs ranks has the node's name from the downward API, and the
    workers (started over ssh) get it from sshd's SetEnv; no two pods of a job share a node, whatever other
    affinity is given; the pods carry the label the rule selects on."""
    for args in (
        ["--nodes", "3"],
        ["--nodes", "3", "--non-root", "--variant", "hostnetwork"],
        ["--nodes", "3", "--name", "acc-7"] + SCHEDULING,
    ):
        doc = yaml.safe_load(render_yaml(args))
        name = doc["metadata"]["name"]
        for role in ("Launcher", "Worker"):
            tmpl = doc["spec"]["mpiReplicaSpecs"][role]["template"]
            c = tmpl["spec"]["containers"][0]
            anti = tmpl["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            check(
                NODE_NAME in c["env"]
                and tmpl["metadata"]["labels"].get("gpuaccept.io/job") == name
                and {
                    "labelSelector": {"matchLabels": {"gpuaccept.io/job": name}},
                    "topologyKey": "kubernetes.io/hostname",
                }
                in anti,
                "{} {}: GA_NODE_NAME from spec.nodeName, label gpuaccept.io/job={}, anti-affinity on it".format(
                    " ".join(args[:6]), role, name
                ),
            )
            if role == "Worker":
                cmd = c["command"]
                check(
                    cmd[cmd.index("-o") + 1] == "SetEnv=GA_NODE_NAME=$(GA_NODE_NAME)",
                    "{}: the worker's sshd hands GA_NODE_NAME to the ranks it starts: {}".format(
                        " ".join(args[:6]), cmd
                    ),
                )


def fabric():
    """InfiniBand by default (issue 25): the RDMA resource and IPC_LOCK in every pod that runs ranks, NCCL not
    kept off IB, gpuaccept run told the GPUs per node; --no-ib: sockets, declared intended (--allow-sockets)."""

    def pods(doc):
        return [doc["spec"]["mpiReplicaSpecs"][r]["template"]["spec"]["containers"][0] for r in ("Launcher", "Worker")]

    def launcher_env(doc):
        return {e["name"]: e.get("value") for e in pods(doc)[0]["env"]}

    doc = yaml.safe_load(render_yaml(["--nodes", "4", "--gpus-per-node", "8"]))
    script = pods(doc)[0]["command"][-1]
    check(
        all(
            c["resources"]["limits"].get("rdma/rdma_shared_device_a") == 1
            and "IPC_LOCK" in c["securityContext"]["capabilities"]["add"]
            for c in pods(doc)
        )
        and launcher_env(doc)["NCCL_IB_DISABLE"] == "0"
        and "gpuaccept run --report-dir /reports --expect-gpus 8 ||" in script
        and "--allow-sockets" not in script,
        "default: InfiniBand (RDMA resource, IPC_LOCK) in both pods, --expect-gpus 8, no --allow-sockets",
    )
    doc = yaml.safe_load(render_yaml(["--rdma-resource", "nvidia.com/hca=8", "--rdma-resource", "rdma/ib"]))
    check(
        all(
            c["resources"]["limits"].get("nvidia.com/hca") == 8
            and c["resources"]["limits"].get("rdma/ib") == 1
            and "rdma/rdma_shared_device_a" not in c["resources"]["limits"]
            for c in pods(doc)
        ),
        "--rdma-resource NAME=COUNT (repeatable) replaces the default resource",
    )
    doc = yaml.safe_load(render_yaml(["--no-ib"]))
    script = pods(doc)[0]["command"][-1]
    check(
        all(not any("rdma" in k for k in c["resources"]["limits"]) and caps(c) == ["SYSLOG"] for c in pods(doc))
        and launcher_env(doc)["NCCL_IB_DISABLE"] == "1"
        and "--expect-gpus 8 --allow-sockets ||" in script,
        "--no-ib: no RDMA resource, no IPC_LOCK, NCCL_IB_DISABLE=1, and gpuaccept run --allow-sockets",
    )
    # Issue 41, item 2: node_health reads the kernel log (Xids) where dmesg_restrict=1: CAP_SYSLOG in every pod
    # that runs it, and only there.
    for program, want in (("suite", True), ("node_health", True), ("gemm_flops", False)):
        doc = yaml.safe_load(render_yaml(["--program", program]))
        check(
            all(("SYSLOG" in caps(c)) == want for c in pods(doc)),
            "%s: CAP_SYSLOG %s" % (program, "in both pods (the kernel log)" if want else "absent"),
        )
    doc = yaml.safe_load(render_yaml(["--cpu-only", "--no-ib"]))
    check("--expect-gpus" not in pods(doc)[0]["command"][-1], "--cpu-only: no --expect-gpus")
    doc = yaml.safe_load(render_yaml(["--variant", "rdma"]))
    check(doc == yaml.safe_load(render_yaml([])), "--variant rdma, the old name, renders the default")


W = ["spec", "mpiReplicaSpecs", "Worker"]
WC = W + ["template", "spec", "containers", 0]
# (what is broken, where, the new value (None deletes), a phrase the rejection must contain)
NEGATIVE = [
    ("two launchers", ["spec", "mpiReplicaSpecs", "Launcher", "replicas"], 2, "Launcher.replicas: must be 1"),
    ("no workers", W + ["replicas"], 0, "Worker.replicas: must be at least 1"),
    ("slotsPerWorker as a string", ["spec", "slotsPerWorker"], "8", "is not of type 'integer'"),
    ("misspelt field", ["spec", "slotPerWorker"], 8, "'slotPerWorker' was unexpected"),
    ("restartPolicy Always", W + ["restartPolicy"], "Always", "must be Never or OnFailure"),
    (
        "unknown launcherCreationPolicy",
        ["spec", "launcherCreationPolicy"],
        "WhenReady",
        "AtStartup or WaitForWorkersReady",
    ),
    ("bad cleanPodPolicy", ["spec", "runPolicy", "cleanPodPolicy"], "Finished", "None, Running or All"),
    ("unknown MPI implementation", ["spec", "mpiImplementation"], "OpenMPI5", "is not one of"),
    ("name too long for worker pods", ["metadata", "name"], "g" * 60, "not a valid DNS-1035 label"),
    ("name with capitals", ["metadata", "name"], "GpuAccept", "not a valid DNS-1035 label"),
    ("worker without containers", W + ["template", "spec", "containers"], None, "'containers' is a required"),
    ("GPU count not a quantity", WC + ["resources", "limits", "nvidia.com/gpu"], "eight", "does not match"),
    ("replicas beyond int32", W + ["replicas"], 2**31, "out of range for int32"),
    ("volume mount without mountPath", WC + ["volumeMounts"], [{"name": "dshm"}], "'mountPath' is a required"),
    ("slots differ from GPUs", ["spec", "slotsPerWorker"], 4, "one rank per GPU"),
    (
        "no /dev/shm volume",
        W + ["template", "spec", "volumes"],
        [{"name": "reports", "emptyDir": {}}],
        "/dev/shm must be a memory-backed emptyDir",
    ),
    ("launcher races workers", ["spec", "launcherCreationPolicy"], "AtStartup", "WaitForWorkersReady"),
    ("no TTL", ["spec", "runPolicy", "ttlSecondsAfterFinished"], None, "ttlSecondsAfterFinished"),
    ("rank 0 on a worker", ["spec", "runLauncherAsWorker"], None, "runLauncherAsWorker"),
    ("BestEffort worker", WC + ["resources", "requests"], None, "BestEffort"),
    ("memory limit under /dev/shm", WC + ["resources", "limits", "memory"], "16Gi", "below its request plus"),
    (
        "IB disabled without --allow-sockets",
        ["spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "containers", 0, "env"],
        [{"name": "NCCL_IB_DISABLE", "value": "1"}],
        "without gpuaccept run --allow-sockets",
    ),
]


def negative():
    validator = validate_mpijob.make_validator(crd)
    good = yaml.safe_load(render_yaml(["--nodes", "4", "--gpus-per-node", "8"]))
    check(validate_mpijob.document_errors(validator, good) == [], "the unbroken manifest is valid")
    for what, path, value, expect in NEGATIVE:
        doc = copy.deepcopy(good)
        set_path(doc, path, value)
        errs = validate_mpijob.document_errors(validator, doc)
        check(any(expect in e for e in errs), "rejects {}: {}".format(what, errs[:2]))


# (options, a phrase of the one line render.py prints) for what the API server would reject
REFUSED = [
    (["--name", "GpuAccept"], "--name 'GpuAccept'"),
    (["--name", "gpu_accept"], "--name 'gpu_accept'"),
    (["--name", "g" * 60], "within 63 characters"),
    (["--name", "gpuaccept-"], "end alphanumeric"),
    (["--namespace", "ML"], "not a valid DNS-1123 label"),
    (["--node-selector", "pool"], "expected KEY=VALUE"),
    (["--node-selector=-pool=gpu"], "not a valid label key"),
    (["--node-selector", "example..com/pool=gpu"], "not a valid label key"),
    (["--node-selector", "pool=" + "v" * 64], "not a valid label value"),
    (["--node-selector", "pool=a b"], "not a valid label value"),
    (["--toleration", "gpu:NoRun"], "effect one of"),
    (["--toleration", "bad key:NoSchedule"], "not a valid taint key"),
    (["--env", "1ABC=x"], "not a valid environment variable name"),
    (["--env", "A-B=x"], "not a valid environment variable name"),
    (["--env", "NOVALUE"], "expected KEY=VALUE"),
    (["--priority-class", "High"], "not a valid DNS-1123 subdomain"),
    (["--memory", "lots"], "not a Kubernetes quantity"),
    (["--affinity-file", "/nonexistent/affinity.json"], "--affinity-file"),
    (["--args", "--quick 'unclosed"], "--args"),
    (["--non-root", "--ssh-port", "22"], "--non-root"),
    (["--ib-gid-index", "-1"], "--ib-gid-index"),
    (["--rdma-resource", "hca"], "not a device plugin resource name"),
    (["--rdma-resource", "nvidia.com/hca=0"], "at least 1"),
    (["--no-ib", "--rdma-network", "sriov-ib"], "--no-ib"),
]
# Words that a shell would run or split if --args reached it unquoted.
HOSTILE = [
    "--baseline",
    "/tmp/dir with spaces/b.json",
    "it's",
    'say "hi"',
    "$(touch {pwned})",
    "`touch {pwned}`",
    "a;touch {pwned}",
    "x && touch {pwned}",
    "$HOME",
    "*",
]


def refused():
    check_refused(os.path.join(mpijob_dir, "render.py"), REFUSED)
    # --args through the real launcher script, with a gpuaccept that records its argv.
    with tempfile.TemporaryDirectory() as tmp:
        pwned = os.path.join(tmp, "pwned")
        words = [w.format(pwned=pwned) for w in HOSTILE]
        os.makedirs(os.path.join(tmp, "bin"))
        fake = os.path.join(tmp, "bin", "gpuaccept")
        with open(fake, "w") as f:
            f.write(
                '#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a"; done > "{}"\nexit 1\n'.format(
                    os.path.join(tmp, "argv")
                )
            )
        os.chmod(fake, 0o755)
        with open(os.path.join(tmp, "hostfile"), "w") as f:
            f.write("localhost slots=1\n")
        rd = os.path.join(tmp, "re ports")
        doc = yaml.safe_load(
            render_yaml(
                [
                    "--prefix",
                    tmp,
                    "--report-dir",
                    rd,
                    "--program",
                    "mem_bw",
                    "--args=" + " ".join(shlex.quote(w) for w in words),
                ]
            )
        )
        cmd = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
        r = subprocess.run(
            cmd,
            env={
                "PATH": os.environ["PATH"],
                "HOME": tmp,
                "OMPI_MCA_orte_default_hostfile": os.path.join(tmp, "hostfile"),
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
        )
        with open(os.path.join(tmp, "argv")) as f:
            got = f.read().split("\0")[:-1]
        want = ["run", "--report-dir", rd, "--only", "mem_bw", "--expect-gpus", "8"] + words
        check(got == want, "--args reach gpuaccept run word for word: {}".format(got))
        check(not os.path.exists(pwned), "nothing in --args was run by the launcher's shell")
        check(r.returncode == 1, "the launcher exits with gpuaccept run's status (1), got {}".format(r.returncode))


if not os.path.isfile(crd):
    print("FAIL: the vendored MPIJob CRD is not at {}".format(crd))
    sys.exit(1)
{"committed": committed, "rendered": rendered, "negative": negative, "refused": refused}[mode]()
finish()
