#!/usr/bin/env python3
"""Checks a node_health report written by a real run: identity, every rank once, each rank's NVML state
(loaded, or why not), the node part on exactly one rank per node, the headlines, the findings named and the
verdict."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--result", default="pass")
    ap.add_argument("--finding", action="append", default=[], help="a fault code that must be present")
    ap.add_argument("--absent", action="append", default=[], help="a fault code that must not be present")
    ap.add_argument("--gpus", type=int, help="GPUs checked (the gpus_checked headline)")
    ap.add_argument("--roles", help="the ports' roles on each node checker, e.g. compute=8,other=4,vf=4")
    args = ap.parse_args()
    r = json.load(open(args.report))
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    expect(r["program"] == "node_health" and r["world_size"] == args.ranks, "program and world size")
    ranks = [rk for node in r["nodes"] for rk in node["ranks"]]
    expect(sorted(rk["rank"] for rk in ranks) == list(range(args.ranks)), "every rank exactly once")
    for node in r["nodes"]:
        checkers = [rk for rk in node["ranks"] if "node" in rk]
        expect(len(checkers) == 1 and checkers[0]["local_rank"] == 0, f"one node checker on {node['host']}")
        for c in checkers:
            kl = c["node"]["kernel_log"]
            expect(kl["read"] or kl["why"], "kernel log neither read nor explained")
            ib = c["node"]["infiniband"]
            expect(ib["read"] or ib["why"], "InfiniBand neither read nor explained")
            if args.roles:
                want = {k: int(v) for k, v in (kv.split("=") for kv in args.roles.split(","))}
                got = {k: sum(p["role"] == k for p in ib["ports"]) for k in want}
                expect(
                    got == want and all(p["role"] in want for p in ib["ports"]), f"port roles {got}, expected {want}"
                )
    for rk in ranks:
        expect(rk["nvml"]["loaded"] or rk["nvml"]["why"], f"rank {rk['rank']}: NVML neither loaded nor explained")
    names = [h["name"] for h in r.get("headlines", [])]
    expect(names == ["gpus_checked", "ib_ports_active", "health_failures", "health_warnings"], f"headlines {names}")
    fails = sum(f["severity"] == "fail" for f in r["findings"])
    expect(next(h for h in r["headlines"] if h["name"] == "health_failures")["value"] == fails, "failures headline")
    expect(r["verdict"]["result"] == args.result, f"verdict {r['verdict']}")
    codes = {f["code"] for f in r["findings"]}
    for code in args.finding:
        expect(code in codes, f"finding {code} missing (have {sorted(codes)})")
    for code in args.absent:
        expect(
            code not in codes, f"finding {code} present: {[f['message'] for f in r['findings'] if f['code'] == code]}"
        )
    if args.gpus is not None:
        got = next(h for h in r["headlines"] if h["name"] == "gpus_checked")["value"]
        expect(got == args.gpus, f"gpus_checked {got}, expected {args.gpus}")
    for e in errors:
        print("FAIL:", e)
    print(f"{args.report}: {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
