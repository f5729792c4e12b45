#!/usr/bin/env python3
"""Writes the sysfs trees the node_health cases replay (ctest/node_health/data/trees/<variant>/). Run it after changing
a variant; its output is committed so that the cases are plain folders.   make_trees.py OUT_DIR

Two node shapes:
- hgx: an 8-GPU HGX H100 node with nothing but its compute fabric: 8 NDR HCAs (mlx5_0..7, one port each), four of
  each per NUMA node, nvidia_peermem loaded. healthy, port_down, rate_200, hca_missing, no_peermem, malformed
  each differ from `healthy` in one fault.
- dgx: a DGX H100 as NVIDIA's DGX H100 User Guide lays out its network (section "Network Modules", table 6: the 8
  compute ports are mlx5_0, 3, 4, 5 on CPU 0 and mlx5_6, 9, 10, 11 on CPU 1, single-port ConnectX-7 at 400 Gb/s
  NDR InfiniBand), beside what a stock node also lists in class/infiniband: the two storage / in-band management
  ports of one dual-port ConnectX-7 bonded (one RDMA device under RoCE LAG, mlx5_bond_0, Ethernet), the other
  card's two ports uncabled (mlx5_7, mlx5_8: Ethernet, DOWN), a 100 GbE NIC (mlx5_12) and SR-IOV virtual
  functions of two compute HCAs (mlx5_13..16, device/physfn a link to their physical function as
  Documentation/ABI/testing/sysfs-bus-pci says; two of them DOWN, as unassigned VFs are). The storage names are
  this fixture's (the guide names the compute ports only). dgx_h100 loads nvidia_peermem; dgx_port_down,
  dgx_hca_missing each differ from it in one compute fault; dgx_dmabuf has no peer-memory module and the open
  kernel modules (module/nvidia/taint without P); dgx_nv_mem has the legacy nv_peer_mem module
  (kernel/mm/memory_peers/nv_mem/version) and the proprietary driver."""
import os
import shutil
import sys

GPUS = [
    "0000:18:00.0",
    "0000:2a:00.0",
    "0000:3a:00.0",
    "0000:5d:00.0",
    "0000:9a:00.0",
    "0000:ab:00.0",
    "0000:ba:00.0",
    "0000:db:00.0",
]
NDR = "400 Gb/sec (4X NDR)"
DOWN = {"state": "1: DOWN", "phys": "3: Disabled"}


def port(rate=NDR, state="4: ACTIVE", phys="5: LinkUp", layer="InfiniBand", counters=None, numa=0, physfn=None):
    c = {"symbol_error": "0", "link_downed": "0", "link_error_recovery": "0", "port_rcv_errors": "0"}
    c.update(counters or {})
    return {
        "state": state,
        "phys_state": phys,
        "rate": rate,
        "link_layer": layer,
        "counters": c,
        "numa": numa,
        "physfn": physfn,
    }


def hgx(name):
    hcas = {"mlx5_%d" % i: port(numa=i // 4) for i in range(8)}
    modules = {"module/nvidia_peermem/version": "595.45.04", "module/nvidia/taint": "POE"}
    if name == "port_down":
        hcas["mlx5_3"] = port(state="1: DOWN", phys="2: Polling", numa=0)
    elif name == "rate_200":
        hcas["mlx5_5"] = port(rate="200 Gb/sec (4X HDR)", numa=1)
    elif name == "hca_missing":
        del hcas["mlx5_7"]
    elif name == "no_peermem":
        del modules["module/nvidia_peermem/version"]
    elif name == "malformed":
        hcas["mlx5_2"] = port(rate="fast", counters={"symbol_error": "many"}, numa=0)
    return hcas, modules


def dgx(name):
    hcas = {"mlx5_%d" % i: port(numa=0) for i in (0, 3, 4, 5)}
    hcas.update({"mlx5_%d" % i: port(numa=1) for i in (6, 9, 10, 11)})
    hcas["mlx5_bond_0"] = port(rate="200 Gb/sec (4X HDR)", layer="Ethernet", numa=0)
    for hca in ("mlx5_7", "mlx5_8"):
        hcas[hca] = port(rate="40 Gb/sec (4X QDR)", layer="Ethernet", numa=1, **DOWN)
    hcas["mlx5_12"] = port(rate="100 Gb/sec (4X EDR)", layer="Ethernet", numa=0)
    for vf, pf, up in (
        ("mlx5_13", "mlx5_0", True),
        ("mlx5_14", "mlx5_0", False),
        ("mlx5_15", "mlx5_6", True),
        ("mlx5_16", "mlx5_6", False),
    ):
        state = {} if up else {"state": "1: DOWN", "phys": "3: Disabled", "rate": "10 Gb/sec (4X SDR)"}
        hcas[vf] = port(numa=hcas[pf]["numa"], physfn=pf, **state)
    modules = {"module/nvidia_peermem/version": "595.45.04", "module/nvidia/taint": "POE"}
    if name == "dgx_port_down":
        hcas["mlx5_9"] = port(rate="10 Gb/sec (4X SDR)", state="1: DOWN", phys="2: Polling", numa=1)
    elif name == "dgx_hca_missing":
        del hcas["mlx5_4"]
    elif name == "dgx_dmabuf":
        modules = {"module/nvidia/taint": "OE", "module/nvidia/version": "595.45.04"}
    elif name == "dgx_nv_mem":
        modules = {"kernel/mm/memory_peers/nv_mem/version": "1.3", "module/nvidia/taint": "POE"}
    return hcas, modules


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def main(out):
    variants = [(n, hgx) for n in ("healthy", "port_down", "rate_200", "hca_missing", "no_peermem", "malformed")]
    variants += [(n, dgx) for n in ("dgx_h100", "dgx_port_down", "dgx_hca_missing", "dgx_dmabuf", "dgx_nv_mem")]
    for name, shape in variants:
        root = os.path.join(out, name)
        shutil.rmtree(root, ignore_errors=True)
        hcas, modules = shape(name)
        for i, bdf in enumerate(GPUS):
            write(os.path.join(root, "bus/pci/devices", bdf, "numa_node"), str(i // 4))
        for hca, p in hcas.items():
            base = os.path.join(root, "class/infiniband", hca)
            write(os.path.join(base, "device/numa_node"), str(p["numa"]))
            if p["physfn"]:
                os.symlink("../../%s/device" % p["physfn"], os.path.join(base, "device/physfn"))
            for key in ("state", "phys_state", "rate", "link_layer"):
                write(os.path.join(base, "ports/1", key), p[key])
            for key, value in p["counters"].items():
                write(os.path.join(base, "ports/1/counters", key), value)
        for rel, text in modules.items():
            write(os.path.join(root, rel), text)


main(sys.argv[1])
