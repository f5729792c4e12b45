#!/usr/bin/env bash
# The two commands a fresh Debian machine needs, each installing what is missing first:
#   launch/dev.sh run [OPTIONS]   build, then run the suite on this machine and print its verdict
#   launch/dev.sh test [ARGS]     build both configurations (GPU paths on and off) with -Werror, run every test;
#                                 then the front-end's tests and its fuzzer again under ASan+UBSan
#   launch/dev.sh install PREFIX  build without tests and install to PREFIX (what the container image runs)
#   launch/dev.sh image [TAG] [BUILD OPTIONS]  build deploy/container/Dockerfile with docker, podman or buildah
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)

# The CUDA toolkit is optional: when it is there, the GPU paths are built (and must build).
cuda_args=(-DGPUACCEPT_CUDA=OFF)
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
    [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
    cuda_args=(-DGPUACCEPT_CUDA=ON -DGPUACCEPT_REQUIRE_CUDA=ON)
fi

configure_and_build() { # dir, cmake args... (later -D arguments override earlier ones)
    local dir=$1
    shift
    mkdir -p "$dir"
    cmake -S . -B "$dir" -DGPUACCEPT_WERROR=ON "$@" >"$dir/dev-configure.log" 2>&1 ||
        { cat "$dir/dev-configure.log"; exit 1; }
    cmake --build "$dir" -j "$jobs" >"$dir/dev-build.log" 2>&1 || { tail -n 60 "$dir/dev-build.log"; exit 1; }
    echo "dev.sh: built $dir ($*)"
}

# The image from this checkout, with whichever engine is here (GA_IMAGE_ENGINE picks one): the context is the
# repository root less Dockerfile.dockerignore; the labels carry the version, commit and origin (no credentials).
build_image() { # [TAG] [engine build options...]
    local version
    version=$(sed -n 's/^project(gpuaccept VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
    local tag="gpuaccept:$version"
    if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then tag=$1 && shift; fi
    local engine=${GA_IMAGE_ENGINE:-}
    if [ -z "$engine" ]; then
        if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then engine=docker
        elif command -v podman >/dev/null 2>&1; then engine=podman
        elif command -v buildah >/dev/null 2>&1; then engine=buildah
        else echo "dev.sh image: no container engine (docker with its daemon, podman or buildah)" >&2 && exit 3; fi
    fi
    local revision=unknown source=unknown
    revision=$(git rev-parse HEAD 2>/dev/null) || revision=unknown
    source=$(git config --get remote.origin.url 2>/dev/null | sed -E 's#^([a-z+]+://)[^/@]*@#\1#') || true
    local args=(-f deploy/container/Dockerfile -t "$tag" --build-arg "GA_VERSION=$version"
        --build-arg "GA_REVISION=$revision" --build-arg "GA_SOURCE=${source:-unknown}")
    case "$engine" in
    docker) args=(build "${args[@]}") ;; # BuildKit reads deploy/container/Dockerfile.dockerignore itself
    podman) args=(build --ignorefile deploy/container/Dockerfile.dockerignore "${args[@]}") ;;
    buildah) args=(bud --ignorefile deploy/container/Dockerfile.dockerignore "${args[@]}") ;;
    *) echo "dev.sh image: GA_IMAGE_ENGINE must be docker, podman or buildah, not '$engine'" >&2 && exit 2 ;;
    esac
    echo "dev.sh: $engine ${args[*]} $* ."
    "$engine" "${args[@]}" "$@" .
    echo "dev.sh: built $tag with $engine"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
run)
    launch/install-deps.sh
    configure_and_build build "${cuda_args[@]}"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    exec build/bin/gpuaccept run --report-dir "${GPUACCEPT_REPORT_DIR:-reports}" "$@"
    ;;
test)
    launch/install-deps.sh --test --slurm
    configure_and_build build "${cuda_args[@]}"
    configure_and_build build-host -DGPUACCEPT_CUDA=OFF
    # The host paths again under ASan and UBSan (float-cast-overflow included): the front-end's tests, the
    # hand-off writers (JUnit, Prometheus) and the fuzzer of everything it reads, where undefined behaviour
    # fails the test instead of passing unseen.
    configure_and_build build-asan -DGPUACCEPT_CUDA=OFF -DGPUACCEPT_SANITIZE=ON
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    status=0
    echo "dev.sh: tests of the host-only build (GPUACCEPT_CUDA=OFF): unit and analysis tests"
    (cd build-host && ctest --output-on-failure -LE 'e2e|mpi|deploy|suite|cluster|container' "$@") || status=1
    echo "dev.sh: the front-end's tests and the fuzzer under ASan+UBSan (GPUACCEPT_SANITIZE=ON)"
    (cd build-asan && ctest --output-on-failure \
        -R '^(suite\.(fixtures|heatmap|merge\..*|untrusted|cli|baseline_compare|fuzz|comparable|inputs\.(report_rule|escaping|node_names|compare|schema_versions|hostfile))|handoff\.consumers|common\.secrets)$' \
        "$@") || status=1
    # Includes the labels `cluster` (the namespace cluster, ctest/cluster/) and `container` (the image, built with
    # buildah: ctest/container/): run as root, skipped (77) otherwise.
    echo "dev.sh: all tests of the default build (${cuda_args[*]})"
    (cd build && ctest --output-on-failure "$@") || status=1
    exit $status
    ;;
install)
    prefix=${1:?usage: launch/dev.sh install PREFIX}
    launch/install-deps.sh
    # -Werror off: a newer compiler's new warning must not stop an install.
    configure_and_build build-install "${cuda_args[@]}" -DGPUACCEPT_TESTS=OFF -DGPUACCEPT_WERROR=OFF
    cmake --install build-install --prefix "$prefix"
    ;;
image)
    build_image "$@"
    ;;
*)
    echo "usage: launch/dev.sh run [gpuaccept run options] | test [ctest options] | install PREFIX |" \
        "image [TAG] [build options]" >&2
    exit 2
    ;;
esac
