#!/usr/bin/env python3
"""Asserts that a GPU run's allreduce_bw report read NCCL's debug log: every node's transport record says
`log: read`, and no communicator went unread. Prints one line; exit 0 when it holds, 1 when not, 2 on bad input."""
import json
import sys


def problems(report):
    nodes = (report.get("transport") or {}).get("nodes") or []
    if not nodes:
        return ["no transport.nodes in the report"]
    found = []
    for node in nodes:
        host = node.get("host")
        if node.get("log") != "read":
            found.append(f"{host}: log is {node.get('log')!r}")
        scopes = node.get("communicators") or {}
        if not scopes:
            found.append(f"{host}: no communicator recorded")
        for name, scope in scopes.items():
            if scope.get("unread", 0) != 0:
                found.append(f"{host}: {scope['unread']} of {scope.get('communicators')} '{name}' communicators unread")
    return found


def main(argv):
    if len(argv) != 2:
        print("usage: check_transport_record.py ALLREDUCE_BW_JSON", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            report = json.load(f)
    except (OSError, ValueError) as exc:
        print(f"check_transport_record.py: {argv[1]}: {exc}", file=sys.stderr)
        return 2
    found = problems(report)
    print("TRANSPORT RECORD " + ("OK: log read, nothing unread" if not found else "NOT OK: " + "; ".join(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
