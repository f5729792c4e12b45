#!/usr/bin/python3
"""Checks gpuaccept's MPIJob manifests against the official CRD and the operator's rules.

    mpijob_manifests_test.py SOURCE_DIR committed|rendered|negative

committed: deploy/mpijob/manifests/*.yaml are valid and are exactly what render.py makes now.
rendered:  a matrix of render.py options (programs, variants, shapes, knobs) all validate.
negative:  broken copies of a valid manifest are each rejected, for the stated reason.
Runs under Debian's /usr/bin/python3 (python3-yaml, python3-jsonschema).
"""
import copy
import itertools
import os
import subprocess
import sys
import tempfile

import yaml

source_dir, mode = sys.argv[1:3]
mpijob_dir = os.path.join(source_dir, "deploy", "mpijob")
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, mpijob_dir)
import render  # noqa: E402
import validate_mpijob  # noqa: E402

crd = validate_mpijob.VENDORED_CRD  # the copy in the repository, deploy/mpijob/schema/

failed = []


def check(ok, what):
    print("{}: {}".format("ok  " if ok else "FAIL", what))
    if not ok:
        failed.append(what)


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
    r = subprocess.run([sys.executable, os.path.join(mpijob_dir, "validate_mpijob.py"), "--crd", crd] + paths)
    check(r.returncode == 0 and len(paths) >= 8, "{} committed manifests validate".format(len(paths)))


def rendered():
    shapes = [["--nodes", "1", "--gpus-per-node", "8"], ["--nodes", "64", "--gpus-per-node", "4"],
              ["--nodes", "2", "--gpus-per-node", "2", "--cpu-only"]]
    knobs = [[], ["--namespace", "ml-infra", "--report-pvc", "gpuaccept-reports", "--args=--quick --timeout 300",
                  "--shm-size", "64Gi", "--image", "registry.example.com:5000/gpuaccept:1.0"],
             ["--rdma-network", "sriov-ib", "--ib-hca", "mlx5", "--socket-ifname", "bond0", "--ssh-port", "2022"]]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (program, variant, shape, knob) in enumerate(itertools.product(
                ["suite"] + render.PROGRAMS, render.VARIANTS, shapes, knobs)):
            args = ["--program", program, "--variant", variant] + shape + knob
            paths.append(os.path.join(tmp, "{:03d}.yaml".format(i)))
            with open(paths[-1], "w") as f:
                f.write(render_yaml(args))
        r = subprocess.run([sys.executable, os.path.join(mpijob_dir, "validate_mpijob.py"), "--crd", crd]
                           + paths, stdout=subprocess.PIPE, universal_newlines=True)
        print(r.stdout, end="")
        check(r.returncode == 0, "{} rendered variants validate".format(len(paths)))
        # The knobs must reach the manifest, not only parse.
        doc = yaml.safe_load(render_yaml(["--variant", "rdma"] + knobs[2]))
        worker = doc["spec"]["mpiReplicaSpecs"]["Worker"]
        check(worker["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "sriov-ib"
              and worker["template"]["spec"]["containers"][0]["command"][-1] == "2022"
              and "hostNetwork" not in worker["template"]["spec"],
              "rdma network annotation and ssh port reach the rendered worker")


def set_path(doc, path, value):
    """Sets doc[path...] = value; value None deletes the key."""
    for k in path[:-1]:
        doc = doc[k]
    if value is None:
        del doc[path[-1]]
    else:
        doc[path[-1]] = value


W = ["spec", "mpiReplicaSpecs", "Worker"]
WC = W + ["template", "spec", "containers", 0]
# (what is broken, where, the new value (None deletes), a phrase the rejection must contain)
NEGATIVE = [
    ("two launchers", ["spec", "mpiReplicaSpecs", "Launcher", "replicas"], 2, "Launcher.replicas: must be 1"),
    ("no workers", W + ["replicas"], 0, "Worker.replicas: must be at least 1"),
    ("slotsPerWorker as a string", ["spec", "slotsPerWorker"], "8", "is not of type 'integer'"),
    ("misspelt field", ["spec", "slotPerWorker"], 8, "'slotPerWorker' was unexpected"),
    ("restartPolicy Always", W + ["restartPolicy"], "Always", "must be Never or OnFailure"),
    ("unknown launcherCreationPolicy", ["spec", "launcherCreationPolicy"], "WhenReady",
     "AtStartup or WaitForWorkersReady"),
    ("bad cleanPodPolicy", ["spec", "runPolicy", "cleanPodPolicy"], "Finished", "None, Running or All"),
    ("unknown MPI implementation", ["spec", "mpiImplementation"], "OpenMPI5", "is not one of"),
    ("name too long for worker pods", ["metadata", "name"], "g" * 60, "not a valid DNS-1035 label"),
    ("name with capitals", ["metadata", "name"], "GpuAccept", "not a valid DNS-1035 label"),
    ("worker without containers", W + ["template", "spec", "containers"], None, "'containers' is a required"),
    ("GPU count not a quantity", WC + ["resources", "limits", "nvidia.com/gpu"], "eight", "does not match"),
    ("replicas beyond int32", W + ["replicas"], 2**31, "out of range for int32"),
    ("volume mount without mountPath", WC + ["volumeMounts"], [{"name": "dshm"}], "'mountPath' is a required"),
    ("slots differ from GPUs", ["spec", "slotsPerWorker"], 4, "one rank per GPU"),
    ("no /dev/shm volume", W + ["template", "spec", "volumes"], [{"name": "reports", "emptyDir": {}}],
     "/dev/shm must be a memory-backed emptyDir"),
    ("launcher races workers", ["spec", "launcherCreationPolicy"], "AtStartup", "WaitForWorkersReady"),
    ("no TTL", ["spec", "runPolicy", "ttlSecondsAfterFinished"], None, "ttlSecondsAfterFinished"),
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


if not os.path.isfile(crd):
    print("FAIL: the vendored MPIJob CRD is not at {}".format(crd))
    sys.exit(1)
{"committed": committed, "rendered": rendered, "negative": negative}[mode]()
print("{} failed".format(len(failed)) if failed else "all checks passed")
sys.exit(1 if failed else 0)
