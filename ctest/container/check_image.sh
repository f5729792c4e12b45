#!/usr/bin/env bash
# container.image: builds deploy/container/Dockerfile from a clean checkout with `launch/dev.sh image` (buildah,
# as root: vfs storage, chroot isolation), then runs in the image what its users run:
#   - `gpuaccept run --quick` (one verdict, exit 0) and `env_audit --version`;
#   - an MPIJob: the launcher command that deploy/mpijob/render.py renders, in a launcher container, against a
#     worker container running the manifest's sshd command; each container in a network namespace of its own,
#     keys mounted as the operator mounts them. Once as root (port 22), once with --non-root (uid 1000, 2222);
# and checks what keeps the image small and safe: no compiler, the non-root user, its labels; prints its size.
# No registry is reachable from CI: both bases are a Debian 12 root file system made with mmdebstrap from the
# package mirror, cached under WORK_DIR so that a rerun does not fetch it again. What that leaves out (CUDA):
# docs/deployment.md.
#   check_image.sh SOURCE_DIR WORK_DIR PYTHON(with PyYAML)
# Needs root (vfs storage, chroot, network namespaces): elsewhere exit 77, as when those cannot work here.
set -uo pipefail
src=$1 work=$2 python=$3
here=$(cd "$(dirname "$0")" && pwd)
tag=localhost/gpuaccept:ci-$$
base_image=localhost/gpuaccept-ci-base:bookworm
net=gaimg$$ # prefix of the network namespaces and working containers
fails=0
t0=$SECONDS

skip() { echo "check_image: SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }
check() {
    local what=$1
    shift
    if "$@"; then echo "ok  : $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
buildah_cmd=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
B() { "${buildah_cmd[@]}" "$@"; }
phase() { echo "check_image: $* ($((SECONDS - t0)) s)"; }

[ "$(id -u)" = 0 ] || skip "needs root (buildah's vfs storage and chroot isolation, network namespaces)"
for t in buildah mmdebstrap ip git timeout; do
    command -v "$t" >/dev/null || die "'$t' not found: launch/install-deps.sh --test installs it"
done
source "$here/mpijob_pods.sh"
# Leftovers of a run killed at its timeout (ctest kills without a signal to trap): its storage, and the namespaces
# it named in $work/netns with what still runs in them. Names carry the pid: another tree's run is not touched.
if [ -s "$work/netns" ]; then
    this_net=$net net=$(cat "$work/netns") && pods_down && net=$this_net
fi
rm -rf "$work/storage" "$work/run" "$work/pods" "$work/quick"
mkdir -p "$work/pods" "$work/quick" && echo "$net" >"$work/netns" || die "cannot create $work"
cleanup() {
    pods_down
    B rm -a >/dev/null 2>&1
    rm -rf "$work/storage" "$work/run" "$work/src" "$work/netns"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
B from --name "$net-probe" scratch >/dev/null 2>"$work/probe.err" ||
    skip "buildah cannot create a container here: $(tail -n 1 "$work/probe.err")"
ip netns add "$net-probe" 2>"$work/probe.err" || skip "no network namespaces here: $(cat "$work/probe.err")"
ip netns delete "$net-probe"

# The Debian 12 base, made once and kept: mmdebstrap's minimal variant (apt, no recommends) with merged /usr.
base_tarball() {
    local tar=$work/debian-bookworm-minbase.tar
    local cmd=(mmdebstrap --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr bookworm)
    if [ -s "$tar" ] && [ "$(cat "$tar.cmd" 2>/dev/null)" = "${cmd[*]}" ]; then
        echo "check_image: base from the cache: $tar"
        return 0
    fi
    rm -f "$tar" "$tar.cmd"
    "${cmd[@]}" "$tar.tmp" >"$work/mmdebstrap.log" 2>&1 || { tail -n 20 "$work/mmdebstrap.log"; return 1; }
    mv "$tar.tmp" "$tar" && echo "${cmd[*]}" >"$tar.cmd"
}

# The files a fresh clone of this working tree would have (tracked and new, not ignored): no build trees.
clean_checkout() {
    rm -rf "$work/src" && mkdir -p "$work/src" || return 1
    git -C "$src" ls-files -z --cached --others --exclude-standard |
        (cd "$src" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$work/src" -xf -
}

phase "making the Debian 12 base"
base_tarball || die "mmdebstrap could not make the base (is the Debian mirror reachable?)"
c=$(B from scratch) && B add "$c" "$work/debian-bookworm-minbase.tar" / >/dev/null &&
    B commit -q --rm "$c" "$base_image" >/dev/null || die "importing the base into buildah"
clean_checkout || die "copying the checkout"
revision=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
version=$(sed -n 's/^project(gpuaccept VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

phase "building the image"
# dev.sh image with buildah, as on a user's machine; then the options CI needs: its own storage, the local bases.
(cd "$work/src" && GA_IMAGE_ENGINE=buildah launch/dev.sh image "$tag" --root "$work/storage" \
    --runroot "$work/run" --storage-driver vfs --isolation chroot --pull-never --jobs 2 --build-arg "GA_REVISION=$revision" \
    --build-arg "BUILD_BASE=$base_image" --build-arg "RUNTIME_BASE=$base_image") >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log"; die "the image did not build (log: $work/build.log)"; }
phase "built $tag"
B inspect --type image "$tag" >"$work/inspect.json" || die "buildah inspect"
"$python" "$here/image_json.py" size "$work/inspect.json"
check "labels" "$python" "$here/image_json.py" labels "$work/inspect.json" "$version" "$revision"

ctr=$(B from --pull-never --name "$net-check" "$tag") || die "no container from $tag"
in_image() { B run --isolation chroot "$@"; }
check "no compiler in the image" test -z "$(in_image "$ctr" -- sh -c \
    'for c in cc gcc c++ g++ cpp as ld; do command -v $c; done; ls -d /usr/lib/gcc/*/*/cc1* 2>/dev/null; true')"
check "user mpiuser, uid 1000, home /home/mpiuser" test "$(in_image "$ctr" -- getent passwd mpiuser |
    cut -d: -f3,6)" = "1000:/home/mpiuser"
check "sshd's configuration and host keys load as root and as mpiuser" \
    in_image "$ctr" -- sh -c '/usr/sbin/sshd -t && setpriv --reuid 1000 --regid 1000 --clear-groups /usr/sbin/sshd -t'
v=$(in_image "$ctr" -- env_audit --version)
check "env_audit --version: '$v'" test "$v" = "env_audit (gpuaccept) $version"

phase "gpuaccept run --quick in the image"
programs=$(in_image "$ctr" -- gpuaccept run --list-programs | cut -f2 | paste -sd, -)
# Two ranks share this machine's cores with whatever else runs, and one may get less of them: the quick profile
# reports a rank below its peer as a warning (--relative warn, issue 32), so the run still passes, as a user's
# would.
rc=0
in_image -v "$work/quick:/reports" "$ctr" -- timeout 300 gpuaccept run --quick >"$work/quick.log" 2>&1 || rc=$?
grep -E '^\[SUITE\] (step|verdict|  )|^\[RESULT\]' "$work/quick.log" | tail -n 12
check "gpuaccept run --quick exits 0 (got $rc)" test "$rc" -eq 0
check "gpuaccept run --quick: one verdict, a pass" "$python" "$here/image_json.py" quick "$work/quick" \
    "$work/quick.log" "$programs"

B from -q --pull-never --name "$net-launcher" "$tag" >/dev/null && B from -q --pull-never --name "$net-worker" "$tag" \
    >/dev/null || die "no pod containers from $tag"
phase "MPIJob as root: launcher and worker containers"
mpijob_case root
phase "MPIJob with --non-root: uid 1000, sshd on 2222"
mpijob_case nonroot --non-root
phase "done: $fails failed"
exit $((fails != 0))
