#!/usr/bin/env bash
# Installs the Debian packages gpuaccept needs to build, run and test. Safe to re-run: it installs only
# what is missing. Usage: launch/install-deps.sh [--test] [--slurm]
set -euo pipefail
want_test=0
want_slurm=0
for a in "$@"; do
    case "$a" in
    --test) want_test=1 ;;
    --slurm) want_slurm=1 ;;
    -h | --help)
        echo "usage: $0 [--test] [--slurm]"
        exit 0
        ;;
    *)
        echo "install-deps: unknown option '$a'" >&2
        exit 2
        ;;
    esac
done

pkgs=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libjansson-dev libhwloc-dev libopenblas-dev
    libxml2-dev)
if [ "$want_test" = 1 ]; then
    pkgs+=(python3 python3-jsonschema python3-yaml chromium prometheus python3-junitparser python3-jsonpatch
        libxml2-utils python3-html5lib python3-markdown-it clang-format black python3-pyflakes
        buildah mmdebstrap iproute2 git) # ctest/container: the image built from a Debian 12 base made here
fi
if [ "$want_slurm" = 1 ]; then
    # --- slurm packages (deployment tests) ---
    pkgs+=(slurmctld slurmd slurm-client munge libpmix-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
