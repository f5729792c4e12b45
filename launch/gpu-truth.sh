#!/bin/bash
# Runs every program's GPU path on one GPU, beside PyTorch references measured on the same GPU, and keeps
# what each printed and wrote (docs/measured-on-gpu.md holds the figures of a run).
#
# usage: launch/gpu-truth.sh BIN_DIR OUT_DIR [STEPS]
#   BIN_DIR  a GPU build's bin/ (cmake -DGPUACCEPT_REQUIRE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
#   OUT_DIR  log.txt and results.tgz (every step's output and reports) are written there
#   STEPS    comma list (default: the list in STEPS below, about 5 minutes on an H200); also gemm_defaults,
#            mem_default, reducing, lm_small (the third run's confirming call), gemm_burst, torch_allreduce,
#            allreduce_win, ddp
# Environment: GA_TRUTH_DEBS=DIR unpacks Open MPI, jansson, hwloc and OpenBLAS from Debian packages in DIR
# (for a machine without them); GA_TRUTH_BUDGET=SEC skips a step whose estimate would end past SEC seconds;
# GA_TRUTH_WORK=DIR keeps the steps' files there instead of OUT_DIR/work; GA_TRUTH_NH_ARGS adds node_health
# options (a one-GPU VM: "--expect-gpus 1 --expect-hcas 0"). Each step has a hard limit (timeout -k), and
# results.tgz is rewritten after every step, so what finished comes back even if the call is cut.
set -u
BIN=$(cd "$1" && pwd)
OUT=$2
STEPS=${3:-info,node_health,env_audit,gemm,mem_bw,allreduce,collectives,devcheck_cost,timeout_path,lm,torch_lm,burn,suite,torch_lm_compile,sanitize}
BUDGET=${GA_TRUTH_BUDGET:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
R=${GA_TRUTH_WORK:-$OUT/work}
LOG=$OUT/log.txt
mkdir -p "$R" "$OUT"
T0=$(date +%s)

say() { echo "[TRUTH] $(($(date +%s) - T0))s $*" | tee -a "$LOG"; }

# Debian's Open MPI unpacked under /tmp/ga-deps and relocated with OPAL_PREFIX (no alternatives links:
# mpirun is made here).
unpack_bundle() {
    local deps=/tmp/ga-deps lib=/tmp/ga-deps/usr/lib/x86_64-linux-gnu
    mkdir -p $deps
    for f in "$GA_TRUTH_DEBS"/*.deb; do dpkg -x "$f" $deps; done
    ln -sf orterun $deps/usr/bin/mpirun
    ln -sf orterun $deps/usr/bin/mpiexec
    export OPAL_PREFIX=$deps/usr PATH=$deps/usr/bin:$PATH
    export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib:$lib/openblas-pthread:$lib/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
}

# The CUDA runtime, cuBLAS and NCCL the programs were linked against, wherever this machine keeps them.
find_gpu_libs() {
    local d extra=""
    for lib in libcudart.so.13 libcublasLt.so.13 libnccl.so.2; do
        d=$( (ls /usr/local/cuda/lib64/$lib /usr/lib/x86_64-linux-gnu/$lib 2>/dev/null;
              python3 - "$lib" 2>/dev/null <<'EOF'
import glob, site, sys
for p in site.getsitepackages():
    for f in glob.glob(p + "/nvidia/*/lib/" + sys.argv[1]):
        print(f)
EOF
             ) | head -1)
        [ -n "$d" ] && extra=$extra:$(dirname "$d")
        say "library $lib: ${d:-NOT FOUND}"
    done
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}$extra
}

# step NAME ESTIMATE_S TIMEOUT_S COMMAND...: runs one step bounded, logs its exit code and time, keeps its output.
step() {
    local name=$1 est=$2 limit=$3 start rc
    shift 3
    start=$(date +%s)
    if [ "$BUDGET" -gt 0 ] && [ $((start - T0 + est)) -gt "$BUDGET" ]; then
        say "SKIP $name (estimate ${est}s past the budget)"
        return 0
    fi
    say "BEGIN $name: $*"
    timeout -k 10 "$limit" bash -c '"$@"' _ "$@" 2>&1 | tee "$R/$name.txt" >>"$LOG"
    rc=${PIPESTATUS[0]}
    say "END $name rc=$rc in $(($(date +%s) - start))s"
    tar czf "$OUT/results.tgz.tmp" -C "$R" . && mv "$OUT/results.tgz.tmp" "$OUT/results.tgz"
}

# GA_TRUTH_RUN1_ARGS: more mpirun options (a rehearsal on a CPU machine: "-x LD_PRELOAD=.../libga_gpu_double.so").
run1() { mpirun -np 1 --bind-to none ${GA_TRUTH_RUN1_ARGS:-} "$@"; }

do_info() {
    nvidia-smi
    # A one-GPU VM is not the 8-GPU node its SKU describes: node_health fails it (HEALTH_GPU_MISSING,
    # HEALTH_IB_HCA_MISSING) unless told --expect-gpus 1 --expect-hcas 0, as GA_TRUTH_NH_ARGS can say.
    if [ "$(nvidia-smi -L | wc -l)" -lt 8 ] && [ -z "${GA_TRUTH_NH_ARGS:-}" ]; then
        echo "NOTE: fewer than 8 GPUs and no GA_TRUTH_NH_ARGS: node_health will fail against the 8-GPU SKU" \
            "(set GA_TRUTH_NH_ARGS=\"--expect-gpus 1 --expect-hcas 0\")"
    fi
    nvidia-smi -q >"$R/nvidia-smi-q.txt"
    nvcc --version | tail -2
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
    for p in "$BIN"/*; do ldd "$p" | grep -E "not found|cudart|cublas|nccl|mpi.so|jansson|hwloc" | sed "s|^|$(basename "$p"): |"; done
    mpirun --version | head -1
}

# torch_ref SECTIONS NAME [OPTIONS...]: torch_reference.py's figures in $R/NAME.json
torch_ref() {
    local sections=$1 name=$2
    shift 2
    python3 -u "$HERE/torch_reference.py" --sections "$sections" --out "$R/$name.json" "$@"
}

# The reference before and after the program, so that neither alone has the GPU cold or hot. gemm_flops in each
# layout (tn, nn) with cuBLASLt's first algorithm and with the fastest of 8 candidates, one report directory each.
do_gemm() {
    local lay algos
    torch_ref gemm torch_gemm_before --dtypes bf16,fp32
    for lay in tn nn; do
        for algos in 1 8; do
            run1 "$BIN/gemm_flops" --datatype bf16,fp32 --layout $lay --algos $algos --remeasure 0 \
                --report-dir "$R/gemm_${lay}_$algos" --timeout 50 --verbose
            echo "gemm_flops --layout $lay --algos $algos rc=$?"
        done
    done
    torch_ref gemm torch_gemm_after --dtypes bf16,fp32
}

# Ten GEMMs after three warm-ups, as a short benchmark times them: before the power cap pulls the clocks down.
do_gemm_burst() {
    torch_ref gemm torch_burst --dtypes bf16,fp16,fp8 --iters 10
    run1 "$BIN/gemm_flops" --datatype bf16,fp16,fp8 --iters 10 --remeasure 0 --report-dir "$R/gemm_burst" --timeout 60
    echo "gemm_flops --iters 10 rc=$?"
}

# Each triad kernel between two torch references; then a 1 GiB copy eager and captured in a CUDA graph.
do_mem_bw() {
    local k
    torch_ref memory torch_memory_before
    for k in grid restrict flat; do
        run1 "$BIN/mem_bw" --triad-kernel $k --remeasure 0 --report-dir "$R/mem_$k" --timeout 40 --verbose
        echo "mem_bw --triad-kernel $k rc=$?"
    done
    torch_ref memory torch_memory_after
    torch_ref graph_copy torch_graph_copy
}

do_ddp() {
    run1 "$BIN/ddp_smoke" --backend gpu --seed 1 --report-dir "$R/ddp_gpu" --timeout 120 --verbose
    echo "ddp gpu rc=$?"
    run1 "$BIN/ddp_smoke" --backend host --seed 1 --report-dir "$R/ddp_host" --timeout 120
    echo "ddp host rc=$?"
}

# lm_train's GPU path: d12 at seq 1024 for at most 30 steps or 50 s (tokens/s, MFU); then a small model the host
# path trains in seconds, 20 steps at the same seed and learning rate on both backends (the same initial weights
# and tokens; their default rates differ), whose loss curves gpu_truth_report.py compares (bf16 against fp32).
# (An array is not exported to step's bash -c, hence local.)
# The new defaults (nn, 8 candidates) on every dtype, and the old ones (tn, the first algorithm), between torch.
do_gemm_defaults() {
    torch_ref gemm torch_gemm_all_before
    run1 "$BIN/gemm_flops" --remeasure 0 --report-dir "$R/gemm_default" --timeout 80 --verbose
    echo "gemm_flops (defaults) rc=$?"
    run1 "$BIN/gemm_flops" --layout tn --algos 1 --remeasure 0 --report-dir "$R/gemm_old" --timeout 60
    echo "gemm_flops --layout tn --algos 1 rc=$?"
    torch_ref gemm torch_gemm_all_after
}

# mem_bw's default triad kernel between torch references.
do_mem_default() {
    torch_ref memory torch_memory_default_before
    run1 "$BIN/mem_bw" --remeasure 0 --report-dir "$R/mem_default" --timeout 40 --verbose
    echo "mem_bw (defaults) rc=$?"
    torch_ref memory torch_memory_default_after
}

# The reducing collectives again, every type and op (fp8 avg is left out on one rank: NCCL refuses it).
do_reducing() {
    local c
    for c in allreduce reduce_scatter reduce; do
        run1 "$BIN/allreduce_bw" --collective $c -d all -o all -b 8 -e 16M -f 8 -n 5 -w 1 \
            --report-dir "$R/coll_$c" --timeout 40
        echo "collective $c rc=$?"
    done
}

do_lm_small() {
    local small=(--layers 2 --channels 128 --heads 4 --seq-len 128 --vocab 512 --batch-size 4 --steps 20 --seed 7
        --lr 0.003 --min-improvement 0 --timeout 60)
    run1 "$BIN/lm_train" --backend gpu "${small[@]}" --report-dir "$R/lm_small_gpu"
    echo "lm_train small gpu rc=$?"
    run1 "$BIN/lm_train" --backend host "${small[@]}" --report-dir "$R/lm_small_host"
    echo "lm_train small host rc=$?"
}

do_lm() {
    local small=(--layers 2 --channels 128 --heads 4 --seq-len 128 --vocab 512 --batch-size 4 --steps 20 --seed 7
        --lr 0.003 --min-improvement 0 --timeout 60)
    run1 "$BIN/lm_train" --backend gpu --model d12 --seq-len 1024 --batch-size 16 --steps 30 --seed 1 \
        --min-improvement 0 --report-dir "$R/lm_gpu" --timeout 50 --verbose
    echo "lm_train d12 gpu rc=$?"
    run1 "$BIN/lm_train" --backend gpu "${small[@]}" --report-dir "$R/lm_small_gpu"
    echo "lm_train small gpu rc=$?"
    run1 "$BIN/lm_train" --backend host "${small[@]}" --report-dir "$R/lm_small_host"
    echo "lm_train small host rc=$?"
}

# The same d12, batch and seq in PyTorch: 20 timed steps eager (torch_lm), or under torch.compile
# (torch_lm_compile, its compilation in the untimed steps, under its own bound).
do_torch_lm() {
    torch_ref lm torch_lm --lm-batch-size 16 --lm-seq-len 1024 --lm-steps 20 --lm-modes eager
}
do_torch_lm_compile() {
    timeout -k 10 150 python3 -u "$HERE/torch_reference.py" --sections lm --out "$R/torch_lm_compile.json" \
        --lm-batch-size 16 --lm-seq-len 1024 --lm-steps 20 --lm-modes compile
    echo "torch.compile rc=$?"
}

# The sweep with NCCL's debug log kept (the transport record must say it was read, nothing unread; the log is
# a parser fixture); in a CUDA graph; on a non-blocking communicator (NCCL_COMM_BLOCKING=0).
do_allreduce() {
    mkdir -p "$R/nccl_log"
    NCCL_DEBUG_FILE="$R/nccl_log/nccl.%h.%p.log" run1 "$BIN/allreduce_bw" -b 8 -e 1G -f 2 --report-dir "$R/ar" \
        -J "$R/ar/nccl-tests.json" --timeout 60 --verbose
    echo "allreduce plain rc=$?"
    python3 "$HERE/check_transport_record.py" "$R/ar/allreduce_bw.json"
    echo "transport record rc=$?"
    run1 "$BIN/allreduce_bw" -b 8 -e 1G -f 2 -G 3 --report-dir "$R/ar_graph" --timeout 60
    echo "allreduce -G 3 rc=$?"
    NCCL_COMM_BLOCKING=0 run1 "$BIN/allreduce_bw" -b 8 -e 1G -f 4 --report-dir "$R/ar_nonblocking" --timeout 60 \
        --verbose
    echo "allreduce NCCL_COMM_BLOCKING=0 rc=$?"
}

# Every collective, every datatype and op, to 16 MiB: only allreduce/float/sum had run on a real NCCL.
do_collectives() {
    local c
    for c in allreduce allgather reduce_scatter broadcast reduce alltoall sendrecv; do
        run1 "$BIN/allreduce_bw" --collective $c -d all -o all -b 8 -e 16M -f 8 -n 5 -w 1 \
            --report-dir "$R/coll_$c" --timeout 40
        echo "collective $c rc=$?"
    done
}

# The device-side fill and check's cost: 1 GiB, 10 cycles of 100 checked runs per placement (2,000 checks)
# against none (wall clock; the difference over 2,000 is one check of 1 GiB, the operation included).
do_devcheck_cost() {
    local c t0 t1
    for c in 0 100 0 100; do
        t0=$(date +%s%N)
        run1 "$BIN/allreduce_bw" -b 1G -e 1G -n 1 -w 0 -c $c -N 10 --report-dir "$R/devcheck_$c" --timeout 60 \
            >/dev/null
        echo "devcheck -c $c rc=$?"
        t1=$(date +%s%N)
        echo "DEVCHECK checks_per_placement=$c wall_ms=$(((t1 - t0) / 1000000))"
    done
}

# A wait bound (-T 2 s) far shorter than the work queued before the wait (20,000 1 GiB allreduces): the run
# must end with exit 4 and name the phase, not crash or hang.
do_timeout_path() {
    run1 "$BIN/allreduce_bw" -b 1G -e 1G -n 1 -w 0 -c 0 -m 20000 -T 2 --report-dir "$R/ar_timeout"
    echo "timeout path rc=$? (expected 4)"
}

# The standard profile on one GPU, each step bounded (its trainers plan within it).
do_suite() {
    "$BIN/gpuaccept" run --np 1 --expect-gpus 1 --step-timeout 60 --args "node_health=--expect-hcas 0" \
        --report-dir "$R/suite"
    echo "gpuaccept run rc=$?"
}

# Small sizes under each compute-sanitizer tool, several at once (one GPU, many cores): correctness only.
do_sanitize() {
    local cs="compute-sanitizer --error-exitcode 99 --print-limit 20" small_gemm small_mem small_ar small_ddp
    small_gemm=("$BIN/gemm_flops" -m 1024 --datatype all -w 1 --iters 2 --remeasure 0 --report-dir "$R/san")
    small_mem=("$BIN/mem_bw" -s 64M --pinned-size 16M --iters 2 --remeasure 0 --report-dir "$R/san")
    small_ar=("$BIN/allreduce_bw" -b 8 -e 1M -f 16 -n 2 -w 1 --report-dir "$R/san")
    small_ddp=("$BIN/ddp_smoke" --backend gpu --quick --steps 20 --min-improvement 0 --report-dir "$R/san")
    mkdir -p "$R/san"
    run1 $cs --tool memcheck --leak-check full "${small_gemm[@]}" >"$R/san/memcheck_gemm.txt" 2>&1 &
    run1 $cs --tool memcheck --leak-check full "${small_mem[@]}" >"$R/san/memcheck_mem.txt" 2>&1 &
    run1 $cs --tool memcheck "${small_ar[@]}" >"$R/san/memcheck_ar.txt" 2>&1 &
    run1 $cs --tool memcheck "${small_ddp[@]}" >"$R/san/memcheck_ddp.txt" 2>&1 &
    run1 $cs --tool memcheck "$BIN/node_health" --report-dir "$R/san" >"$R/san/memcheck_nh.txt" 2>&1 &
    run1 $cs --tool memcheck "$BIN/env_audit" --report-dir "$R/san" >"$R/san/memcheck_env.txt" 2>&1 &
    wait
    run1 $cs --tool racecheck "${small_mem[@]}" >"$R/san/racecheck_mem.txt" 2>&1 &
    run1 $cs --tool racecheck "${small_ddp[@]}" >"$R/san/racecheck_ddp.txt" 2>&1 &
    run1 $cs --tool synccheck "${small_mem[@]}" >"$R/san/synccheck_mem.txt" 2>&1 &
    run1 $cs --tool synccheck "${small_ddp[@]}" >"$R/san/synccheck_ddp.txt" 2>&1 &
    run1 $cs --tool racecheck "$BIN/gemm_flops" -m 256 --datatype bf16,fp32 -w 1 --iters 1 --remeasure 0 \
        --report-dir "$R/san" >"$R/san/racecheck_gemm.txt" 2>&1 &
    # cuBLAS's own Hopper kernels (nvjet_*) apart: racecheck reported hazards inside one (not our code)
    run1 $cs --tool racecheck --kernel-name-exclude kns=nvjet "$BIN/gemm_flops" -m 256 --datatype bf16,fp32 -w 1 \
        --iters 1 --remeasure 0 --report-dir "$R/san" >"$R/san/racecheck_gemm_own.txt" 2>&1 &
    run1 $cs --tool synccheck "$BIN/gemm_flops" -m 256 --datatype bf16,fp32 -w 1 --iters 1 --remeasure 0 \
        --report-dir "$R/san" >"$R/san/synccheck_gemm.txt" 2>&1 &
    wait
    for f in "$R"/san/*.txt; do echo "== $(basename "$f"): $(grep -E "ERROR SUMMARY|RESULT" "$f" | tr '\n' ' ')"; done
}

export -f say run1 torch_ref do_lm do_gemm_defaults do_mem_default do_reducing do_lm_small do_torch_lm do_torch_lm_compile do_collectives do_devcheck_cost do_suite do_gemm do_gemm_burst do_mem_bw do_info do_ddp do_allreduce do_timeout_path do_sanitize
export BIN R LOG T0 HERE GA_TRUTH_RUN1_ARGS
[ -n "${GA_TRUTH_DEBS:-}" ] && unpack_bundle
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
find_gpu_libs
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv -l 1 >"$R/smi.csv" 2>&1 &
SMI=$!

for s in ${STEPS//,/ }; do
    case $s in
    info) step info 8 60 do_info ;;
    node_health) step node_health 4 30 run1 "$BIN/node_health" --report-dir "$R/nh" --timeout 25 --verbose ${GA_TRUTH_NH_ARGS:-} ;;
    env_audit) step env_audit 4 30 run1 "$BIN/env_audit" --expect-gpus 1 --report-dir "$R/env" --timeout 25 --verbose ;;
    gemm) step gemm 50 110 do_gemm ;;
    gemm_burst) step gemm_burst 20 90 do_gemm_burst ;;
    mem_bw) step mem_bw 30 90 do_mem_bw ;;
    torch_allreduce) step torch_allreduce 30 120 torch_ref allreduce torch_allreduce ;;
    allreduce) step allreduce 35 100 do_allreduce ;;
    allreduce_win) step allreduce_win 20 90 run1 "$BIN/allreduce_bw" -b 8 -e 1G -f 2 -R 2 --report-dir "$R/ar_win" --timeout 80 ;;
    collectives) step collectives 35 120 do_collectives ;;
    devcheck_cost) step devcheck_cost 15 80 do_devcheck_cost ;;
    ddp) step ddp 40 150 do_ddp ;;
    gemm_defaults) step gemm_defaults 60 150 do_gemm_defaults ;;
    mem_default) step mem_default 15 60 do_mem_default ;;
    reducing) step reducing 12 90 do_reducing ;;
    lm_small) step lm_small 12 60 do_lm_small ;;
    lm) step lm 60 100 do_lm ;;
    torch_lm) step torch_lm 35 80 do_torch_lm ;;
    torch_lm_compile) step torch_lm_compile 100 160 do_torch_lm_compile ;;
    timeout_path) step timeout_path 8 40 do_timeout_path ;;
    burn) step burn 28 50 run1 "$BIN/gemm_flops" --datatype bf16 --duration 20 --report-dir "$R/burn" --timeout 45 ;;
    suite) step suite 100 150 do_suite ;;
    sanitize) step sanitize 90 240 do_sanitize ;;
    *) say "unknown step $s" ;;
    esac
done
kill $SMI 2>/dev/null
tar czf "$OUT/results.tgz.tmp" -C "$R" . && mv "$OUT/results.tgz.tmp" "$OUT/results.tgz"
say "done"
