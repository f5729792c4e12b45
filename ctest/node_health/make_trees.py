#!/usr/bin/env python3
"""Writes the sysfs trees the node_health cases replay (ctest/node_health/trees/<variant>/), as an 8-GPU
HGX H100 node lays them out: 8 GPUs and 8 NDR HCAs (mlx5_0..7, one port each), four of each per NUMA node,
nvidia_peermem loaded. Each variant differs from `healthy` in one fault. Run it after changing a variant;
its output is committed so that the cases are plain folders.   make_trees.py OUT_DIR"""
import os
import shutil
import sys

GPUS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
        "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]


def port(rate="400 Gb/sec (4X NDR)", state="4: ACTIVE", phys="5: LinkUp", counters=None):
    c = {"symbol_error": "0", "link_downed": "0", "link_error_recovery": "0", "port_rcv_errors": "0"}
    c.update(counters or {})
    return {"state": state, "phys_state": phys, "rate": rate, "link_layer": "InfiniBand", "counters": c}


def variant(name):
    hcas = {"mlx5_%d" % i: port() for i in range(8)}
    peermem = True
    if name == "port_down":
        hcas["mlx5_3"] = port(state="1: DOWN", phys="2: Polling")
    elif name == "rate_200":
        hcas["mlx5_5"] = port(rate="200 Gb/sec (4X HDR)")
    elif name == "hca_missing":
        del hcas["mlx5_7"]
    elif name == "no_peermem":
        peermem = False
    elif name == "malformed":
        hcas["mlx5_2"] = port(rate="fast", counters={"symbol_error": "many"})
    return hcas, peermem


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def main(out):
    for name in ("healthy", "port_down", "rate_200", "hca_missing", "no_peermem", "malformed"):
        root = os.path.join(out, name)
        shutil.rmtree(root, ignore_errors=True)
        hcas, peermem = variant(name)
        for i, bdf in enumerate(GPUS):
            write(os.path.join(root, "bus/pci/devices", bdf, "numa_node"), str(i // 4))
        for hca, p in hcas.items():
            base = os.path.join(root, "class/infiniband", hca)
            write(os.path.join(base, "device/numa_node"), str(int(hca[-1]) // 4))
            for key in ("state", "phys_state", "rate", "link_layer"):
                write(os.path.join(base, "ports/1", key), p[key])
            for key, value in p["counters"].items():
                write(os.path.join(base, "ports/1/counters", key), value)
        if peermem:
            write(os.path.join(root, "module/nvidia_peermem/refcnt"), "0")
        else:
            os.makedirs(os.path.join(root, "module"), exist_ok=True)
            write(os.path.join(root, "module/nvidia/refcnt"), "1")


main(sys.argv[1])
