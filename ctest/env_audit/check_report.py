#!/usr/bin/env python3
"""Checks an env_audit report written by a real run: identity, every rank present once, grouping by node,
every version filled or explained, the environment allow-list and redaction, and the verdict."""
import argparse
import json
import sys

VERSIONS = [
    "nvidia_driver",
    "cuda_driver",
    "cuda_runtime",
    "cublas",
    "nccl_library",
    "nccl_header",
    "mpi_library",
    "hwloc",
    "jansson",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--launcher", default="mpirun")
    ap.add_argument("--result", default="pass")
    ap.add_argument("--finding", action="append", default=[], help="a fault code that must be present")
    ap.add_argument("--absent-text", action="append", default=[], help="text that must not appear anywhere")
    ap.add_argument(
        "--redacted",
        action="append",
        default=[],
        help="a variable every rank must record, its value (or its URL's user:password) redacted",
    )
    ap.add_argument("--gpu-firmware", type=int, help="GPUs in the first rank's host.gpu_firmware (NVML)")
    ap.add_argument("--firmware", action="append", default=[], help="BUS=VBIOS/INFOROM a GPU must have (null: none)")
    args = ap.parse_args()

    with open(args.report) as f:
        text = f.read()
    r = json.loads(text)
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    expect(r["schema"] == "gpuaccept-report" and r["schema_version"] == 1, "schema and version")
    expect(r["program"] == "env_audit", "program name")
    expect(r["world_size"] == args.ranks, f"world_size {r['world_size']} != {args.ranks}")
    expect(r["node_count"] == args.nodes, f"node_count {r['node_count']} != {args.nodes}")
    expect(r["launcher"]["kind"] == args.launcher, f"launcher {r['launcher']}")
    expect(len(r["nodes"]) == args.nodes, "one entry per node")

    ranks = [rk for node in r["nodes"] for rk in node["ranks"]]
    expect(sorted(rk["rank"] for rk in ranks) == list(range(args.ranks)), "every rank exactly once")
    for node in r["nodes"]:
        expect(node["local_ranks"] == len(node["ranks"]), f"local_ranks of {node['host']}")
        expect(
            sorted(rk["local_rank"] for rk in node["ranks"]) == list(range(len(node["ranks"]))),
            f"local ranks 0..n-1 on {node['host']}",
        )
    for rk in ranks:
        v = rk["versions"]
        expect(sorted(v) == sorted(VERSIONS), f"rank {rk['rank']} versions keys")
        for name in VERSIONS:
            entry = v.get(name, {})
            expect(
                bool(entry.get("value")) or bool(entry.get("why")),
                f"rank {rk['rank']} {name} neither filled nor explained",
            )
        expect(v["mpi_library"]["value"].startswith("Open MPI"), "MPI library version")
        expect(rk["gpu_count"] == len(rk["gpus"]), "gpu_count matches gpus")
        if rk["gpu_count"] == 0:
            expect(bool(rk.get("gpu_why_none")), "no GPU and no reason")
        expect(rk["cpu"]["cores"] > 0 and rk["cpu"]["memory_gib"] > 0, "cpu and memory from hwloc")
        for name in args.redacted:
            expect(
                "<redacted>" in rk["environment"].get(name, ""),
                f"rank {rk['rank']} {name}: {rk['environment'].get(name, 'not recorded')!r}, not redacted",
            )
        for name in rk["environment"]:
            expect(
                name.split("_")[0]
                in ("NCCL", "UCX", "OMPI", "PMIX", "CUDA", "NVIDIA", "HWLOC", "OMP", "OPENBLAS", "LD", "SLURM"),
                f"variable {name} is not allow-listed",
            )
            expect(not name.startswith("OMPI_MCA_orte_hnp"), "launch-internal variable recorded")

    first = next(rk for node in r["nodes"] for rk in node["ranks"] if rk["local_rank"] == 0)
    host = first["host_settings"]
    expect("fabric_manager" in host["not_covered"], "host settings say what is not covered")
    if args.gpu_firmware is not None:
        got = len(host["gpu_firmware"])
        expect(got == args.gpu_firmware, f"{got} GPUs' firmware, {args.gpu_firmware} expected")
    by_bus = {g["pci_bus_id"]: g for g in host["gpu_firmware"]}
    for spec in args.firmware:
        bus, versions = spec.split("=")
        vbios, inforom = (None if v == "null" else v for v in versions.split("/"))
        g = by_bus.get(bus, {})
        expect(g.get("vbios") == vbios and g.get("inforom", "-") == inforom, f"GPU {bus}: {g}, not {versions}")

    fields = {c["field"]: c for c in r["summary"]["consistency"]}
    expect(
        {"nvidia_driver", "cuda_runtime", "nccl", "mpi", "kernel", "gpus_per_node", "gpu_model", "nccl_settings"}
        | {"dimms", "memory_gib", "gpu_vbios", "gpu_inforom", "hca_firmware", "pcie_acs", "kernel_cmdline"}
        <= set(fields),
        "consistency fields",
    )
    expect(r["verdict"]["result"] == args.result, f"verdict {r['verdict']}")
    codes = {f["code"] for f in r["findings"]}
    for code in args.finding:
        expect(code in codes, f"finding {code} missing (have {sorted(codes)})")
    for t in args.absent_text:
        expect(t not in text, f"'{t}' appears in the report")

    for e in errors:
        print("FAIL:", e)
    print(f"{args.report}: {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
