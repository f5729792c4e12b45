#!/usr/bin/python3
"""The checks of check_image.sh that read JSON or YAML; each prints ok/FAIL lines and exits 1 on a failure.

    image_json.py size INSPECT_JSON                         print the image's size from `buildah inspect`
    image_json.py labels INSPECT_JSON VERSION REVISION      the OCI labels say what was built
    image_json.py pods MANIFEST OUT_DIR                     the MPIJob's pods as the operator would start them
    image_json.py quick REPORT_DIR LOG PROGRAMS             `gpuaccept run --quick`: one verdict, a pass
    image_json.py mpijob REPORT_DIR LOG LAUNCHER WORKER     the MPIJob's ranks ran in both containers
"""
import glob
import json
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy"))
from deploy_helpers import check, finish  # noqa: E402


def size(inspect):
    """The sum of the layers' sizes: what `docker images` and `podman images` show (uncompressed)."""
    layers = json.loads(inspect["Manifest"])["layers"]
    sizes = [layer["size"] for layer in layers]
    print(
        "image size: {:.0f} MB uncompressed ({} bytes; layers: {})".format(
            sum(sizes) / 1e6, sum(sizes), " + ".join("{:.0f} MB".format(s / 1e6) for s in sizes)
        )
    )


def labels(inspect, version, revision):
    got = inspect["OCIv1"]["config"].get("Labels") or {}
    oci = "org.opencontainers.image."
    check(
        got.get(oci + "version") == version,
        "label version {!r} is the build's {}".format(got.get(oci + "version"), version),
    )
    check(
        revision == "unknown" or got.get(oci + "revision") == revision,
        "label revision {!r} is the checkout's {}".format(got.get(oci + "revision"), revision),
    )
    for name in ("source", "licenses", "title"):
        check(bool(got.get(oci + name)), "label {} is set: {!r}".format(name, got.get(oci + name)))


# What the mpi-operator (pkg/controller/mpi_job_controller.go: launcherEnvVars, ompiEnvVars, the slots variable)
# appends to the launcher container's env, after the manifest's own; the kubelet keeps the last of equal names.
def operator_env(slots):
    return [
        ("K_MPI_JOB_ROLE", "launcher"),
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
        ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
        ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
        ("OMPI_MCA_orte_set_default_slots", str(slots)),
        ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
    ]


# The nodes the two pods run on, unlike their host names (the pods'), as the downward API gives them.
NODES = {"launcher": "kube-node-a", "worker": "kube-node-b"}


def kubelet_value(e, role):
    """An env entry's value as the kubelet sets it: spec.nodeName through the downward API is the pod's node."""
    if e.get("valueFrom") == {"fieldRef": {"fieldPath": "spec.nodeName"}}:
        return NODES[role]
    return e["value"]


def expand(word, env):
    """The kubelet's $(VAR) expansion of a command word from the container's own env."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), word)


def pods(manifest, out):
    """Writes what check_image.sh needs to start the job's two pods: launcher.cmd and worker.cmd (NUL-separated
    words), launcher.env (NAME=VALUE lines, last one wins as in the kubelet), hostfile (the operator's format)
    and pod.vars (shell assignments: names, user, ssh mount path, report directory)."""
    import yaml

    job = yaml.safe_load(open(manifest))
    spec = job["spec"]
    name, ns = job["metadata"]["name"], job["metadata"].get("namespace", "default")
    check(
        spec["runLauncherAsWorker"] is True and spec["mpiReplicaSpecs"]["Worker"]["replicas"] == 1,
        "the job is a launcher (a node of the job) and one worker",
    )
    pod = {k: spec["mpiReplicaSpecs"][k]["template"]["spec"] for k in ("Launcher", "Worker")}
    launcher, worker = (pod[k]["containers"][0] for k in ("Launcher", "Worker"))
    env = {}
    for k, v in [(e["name"], kubelet_value(e, "launcher")) for e in launcher.get("env", [])] + operator_env(
        spec["slotsPerWorker"]
    ):
        env.pop(k, None)
        env[k] = v
    with open(os.path.join(out, "launcher.env"), "w") as f:
        f.write("".join("{}={}\n".format(k, v) for k, v in env.items()))
    for role, c in (("launcher", launcher), ("worker", worker)):
        own = {e["name"]: kubelet_value(e, role) for e in c.get("env", [])}
        with open(os.path.join(out, role + ".cmd"), "w") as f:
            f.write("".join(expand(w, own) + "\0" for w in c["command"]))
    hosts = ["{}-launcher.{}.{}.svc".format(name, name, ns), "{}-worker-0.{}.{}.svc".format(name, name, ns)]
    with open(os.path.join(out, "hostfile"), "w") as f:
        f.write("".join("{} slots={}\n".format(h, spec["slotsPerWorker"]) for h in hosts))
    user = (pod["Launcher"].get("securityContext") or {}).get("runAsUser", 0)
    reports = [m["mountPath"] for m in launcher["volumeMounts"] if m["name"] == "reports"][0]
    values = {
        "job": name,
        "launcher_fqdn": hosts[0],
        "worker_fqdn": hosts[1],
        "run_as": user,
        "ssh_path": spec.get("sshAuthMountPath", "/root/.ssh"),
        "report_dir": reports,
    }
    with open(os.path.join(out, "pod.vars"), "w") as f:
        f.write("".join("{}={}\n".format(k, shlex.quote(str(v))) for k, v in values.items()))


def verdict_lines(log):
    """The log's lines less buildah's own notes on a command's exit status, and the suite's verdict lines."""
    lines = [
        l
        for l in open(log).read().splitlines()
        if not l.startswith(("subprocess exited with status", "Error: exit status"))
    ]
    return lines, [l for l in lines if l.startswith("[SUITE] verdict:")]


def quick(report_dir, log, programs):
    lines, verdicts = verdict_lines(log)
    check(len(verdicts) == 1, "one verdict line: {}".format(verdicts))
    check(
        lines and lines[-1] == "[RESULT] SUCCESS",
        "the last line is [RESULT] SUCCESS: {!r}".format(lines[-1] if lines else None),
    )
    found = glob.glob(os.path.join(report_dir, "*", "summary.json"))
    check(len(found) == 1, "one summary.json under the default report directory: {}".format(found))
    if len(found) != 1:
        return
    verdict = json.load(open(found[0]))["verdict"]
    check(
        verdict["result"] == "pass" and verdict["exit_code"] == 0,
        "summary.json: pass, exit 0: {}".format({k: verdict.get(k) for k in ("result", "exit_code", "fault_codes")}),
    )
    run = json.load(open(os.path.join(os.path.dirname(found[0]), "suite_run.json")))
    ran = [s["program"] for s in run["steps"] if s["status"] != "skipped"]
    check(ran == programs.split(","), "every program of the suite ran: {}".format(ran))


def mpijob(report_dir, log, launcher_host, worker_host):
    lines, verdicts = verdict_lines(log)
    check(len(verdicts) == 1 and "PASS, exit 0" in verdicts[0], "one verdict, a pass: {}".format(verdicts))
    try:
        report = json.load(open(os.path.join(report_dir, "env_audit.json")))
    except (OSError, ValueError) as e:
        check(False, "env_audit.json: {}".format(e))
        return
    hosts = sorted((n["host"], n.get("pod")) for n in report["nodes"])
    check(
        report["launcher"]["kind"] == "mpijob" and report["world_size"] == 2,
        "launcher kind mpijob, 2 ranks: {} {}".format(report["launcher"]["kind"], report["world_size"]),
    )
    # Each rank names its node (GA_NODE_NAME: the launcher's env, the worker's through sshd's SetEnv) and its
    # pod beside it (issue 41, item 1).
    check(
        hosts == sorted([(NODES["launcher"], launcher_host), (NODES["worker"], worker_host)]),
        "one rank in each container, named by node and pod: {}".format(hosts),
    )
    verdict = json.load(open(os.path.join(report_dir, "summary.json")))["verdict"]
    check(verdict["exit_code"] == 0, "summary.json exit code 0: {}".format(verdict["exit_code"]))


def main(argv):
    what = argv[0]
    if what == "size":
        size(json.load(open(argv[1])))
        return
    if what == "labels":
        labels(json.load(open(argv[1])), argv[2], argv[3])
    elif what == "pods":
        pods(argv[1], argv[2])
    elif what == "quick":
        quick(*argv[1:4])
    elif what == "mpijob":
        mpijob(*argv[1:5])
    else:
        sys.exit("image_json.py: unknown check " + what)
    finish()


if __name__ == "__main__":
    main(sys.argv[1:])
