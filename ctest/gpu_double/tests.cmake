# The scenarios (included by CMakeLists.txt). Programs run with small sizes; -T and the other bounds are short
# so that a hang is seen in seconds.
set(_ar ${GA_BIN_DIR}/allreduce_bw)
set(_gf ${GA_BIN_DIR}/gemm_flops)
set(_mb ${GA_BIN_DIR}/mem_bw)
set(_ddp ${GA_BIN_DIR}/ddp_smoke)

# Healthy runs: the GPU path runs end to end on the double and passes.
ga_double_test(allreduce_healthy --exit 0 --report "r['summary']['backend'] == 'nccl'"
               -- ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 2 -T 5)

# Issue 40, finding 11: an NCCL library older than the headers (2.27.3 under 2.28's) is refused at the first
# communicator: exit 3, one line naming both versions, from one rank; rank 1 alone with the old library is
# the one named. (Before the fix: the run went on, and passed.)
ga_double_test(nccl_library_older_than_headers --exit 3 --within 30 --env GA_DOUBLE_NCCL_VERSION=22703
               --env GA_DOUBLE_FAULT_RANK=1
               --stderr-once "older than the NCCL headers this program was built with"
               --stderr "\\[FATAL\\] [^ ]+ rank 1 .*NCCL library loaded \\(2\\.27\\.3, ncclGetVersion\\)"
               -- ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 1 -T 5)

# Defect 1: a collective that never completes (a peer that never joined, a stuck link) reports no error; the
# wait ends at -T all the same, the communicator is aborted and the message names the operation, its size,
# the communicator and the rank. (Before the fix: the wait never ended.)
ga_double_test(allreduce_collective_never_completes --exit 4 --within 10
               --env GA_DOUBLE_NCCL_HANG=AllReduce:3 --env GA_DOUBLE_TRACE=1
               --stderr "timeout: allreduce float sum 512 B out-of-place \\(world, rank [01] of 2\\) on NCCL communicator 'world' \\(rank [01] of 2\\) did not complete within 2 s"
               --stderr "ncclCommAbort \\(rank [01] of 2\\)"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -c 0 -T 2)
# An asynchronous NCCL error on one rank: its communicator aborted, exit 3 (environment), naming the rank.
ga_double_test(allreduce_async_error --exit 3 --within 10
               --env GA_DOUBLE_NCCL_ASYNC_ERROR=AllReduce:2 --env GA_DOUBLE_FAULT_RANK=1 --env GA_DOUBLE_TRACE=1
               --stderr "\\[FATAL\\] [^ ]+ rank 1 .*NCCL error during allreduce .*remote process exited"
               --stderr "ncclCommAbort \\(rank 1 of 2\\)"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -c 0 -T 20)
# Issue 28 finding 1: the watcher never calls NCCL. A blocking collective call that blocks (rank 1 never
# connects, so rank 0's first collective waits for it inside NCCL) used to meet the watcher's ncclCommAbort
# from another thread: the double ends the process there, as two threads on one communicator may in NCCL
# (before the fix: exit 134). Now the watcher waits a second for the main thread, then ends the job: exit 4.
ga_double_test(allreduce_connect_never_completes --exit 4 --within 12
               --env GA_DOUBLE_NCCL_CONNECT_HANG=1 --env GA_DOUBLE_FAULT_RANK=1
               --stderr "did not complete within 2 s" --absent "\\[gpu-double\\] FATAL"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -c 0 -T 2)
# Finding 9: NCCL_COMM_BLOCKING=0 in the environment overrides config.blocking; every call answers
# ncclInProgress and is polled out (before the fix: exit 3 at the init). With a collective that never
# completes, the main thread aborts the communicator itself: NCCL's documented abort pattern.
ga_double_test(allreduce_nonblocking_env --exit 0 --within 20 --env NCCL_COMM_BLOCKING=0 --env GA_DOUBLE_TRACE=1
               --stdout "NCCL_COMM_BLOCKING=0 in the environment"
               --stderr "ncclCommInitRankConfig rank 0 of 2 .* blocking 0"
               --report "r['summary']['backend'] == 'nccl' and r['summary']['wrong_total'] == 0"
               -- ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 1 -T 5 -R 2)
ga_double_test(allreduce_nonblocking_collective_never_completes --exit 4 --within 10
               --env NCCL_COMM_BLOCKING=0 --env GA_DOUBLE_NCCL_HANG=AllReduce:3 --env GA_DOUBLE_TRACE=1
               --stderr "timeout: allreduce float sum 512 B out-of-place .* did not complete within 2 s\\x3b communicator aborted"
               --stderr "ncclCommAbort \\(rank [01] of 2\\)" --absent "\\[gpu-double\\] FATAL"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -c 0 -T 2)
ga_double_test(allreduce_nonblocking_init_never_finishes --exit 4 --within 10
               --env NCCL_COMM_BLOCKING=0 --env GA_DOUBLE_NCCL_INIT_HANG=1 --env GA_DOUBLE_FAULT_RANK=1
               --stderr "NCCL communicator init \\('world', rank [01] of 2\\) did not complete within 2 s\\x3b communicator aborted"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -T 2)
# NCCL init that never finishes on one rank: exit 4 at -T, naming the init.
ga_double_test(allreduce_init_never_finishes --exit 4 --within 10
               --env GA_DOUBLE_NCCL_INIT_HANG=1 --env GA_DOUBLE_FAULT_RANK=1
               --stderr "timeout: NCCL communicator init \\('world', rank [01] of 2\\) did not complete within 2 s"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -T 2)
# The same bound in pairs mode: the pair communicators are bounded and named too.
ga_double_test(allreduce_pairs_collective_never_completes --np 4 --exit 4 --within 12
               --env GA_DOUBLE_NCCL_HANG=AllReduce:2 --env GA_DOUBLE_FAULT_RANK=2
               --stderr "NCCL communicator 'pair [0-9] round 0' \\(rank [01] of 2\\) did not complete within 2 s"
               -- ${_ar} --pattern pairs -b 512 -e 512 -n 3 -w 1 -c 0 -T 2 --rounds 1)
# The node and pairs patterns on the GPU path: an NCCL communicator per node (the 4 ranks here) and per pair,
# every pair of --rounds all measured, one report. The double's times are host scheduling of 4 spinning processes
# on few cores, so a pair's figure is noise that can name a slow link: such a finding (exit 1) is allowed, any
# other finding is not. What this checks is the orchestration.
ga_double_test(allreduce_node_and_pairs --np 4 --exit 0 --exit 1 --within 40
               --report "all(f['code'] in ('COMM_SLOW_LINK', 'COMM_SLOW_NODE') for f in r['findings'])"
               --report "r['summary']['backend'] == 'nccl' and r['summary']['patterns'] == ['node', 'pairs']"
               --report "[n['ranks'] for n in r['summary']['node']['nodes']] == [4] and r['summary']['node']['nodes'][0]['busbw_GBps'] > 0"
               --report "r['summary']['pairs']['coverage']['tested'] == 6 and r['summary']['pairs']['coverage']['of'] == 6"
               --stdout "pairs: 6 of 6 pairs tested"
               -- ${_ar} --pattern node,pairs --rounds all -b 512 -e 4K -f 8 -n 3 -w 1 -T 5 --tolerance 99)
# ddp_smoke's -T/--wait-timeout bounds its gradient allreduce the same way.
ga_double_test(ddp_comm_timeout --exit 4 --within 12 --env GA_DOUBLE_NCCL_HANG=AllReduce
               --stderr "did not complete within 2 s"
               --stderr "NCCL communicator 'ddp_smoke gradients'"
               -- ${_ddp} --backend gpu --quick --steps 5 -T 2)

# Defect 3: with -c 2, the rank that sees a wrong element must still issue the second check's collective,
# or the other ranks wait for it forever. No hang: exit 1, the finding names the rank.
ga_double_test(allreduce_check_wrong_rank_no_hang --exit 1 --within 10 --env GPUACCEPT_TEST_WRONG_RANK=1
               --stdout "COMM_WRONG_RESULT.*rank 1 on"
               --report "r['summary']['wrong_total'] > 0"
               -- ${_ar} -b 512 -e 4K -f 8 -n 2 -w 1 -c 2 -T 3)

# The device check (issue 44): the double runs allreduce_bw's fill and compare kernels with the shared
# per-element maths (ar_elem.h). A wrong element written into device memory on rank 1 after the collective is
# counted by the compare kernel (ar_wrong), reported as the host check would (COMM_WRONG_RESULT, rank 1);
# rank 0's kernels ran and found nothing. On the host check (before) no kernel ran: ar_fills stays 0.
ga_double_test(allreduce_device_check_wrong --exit 1 --within 10 --env GPUACCEPT_TEST_WRONG_RANK=1
               --env GA_DOUBLE_TRACE=1 --stdout "COMM_WRONG_RESULT.*rank 1 on"
               --stderr "rank 1: .* ar_fills [1-9][0-9]* ar_verifies [1-9][0-9]* ar_wrong [1-9]"
               --stderr "rank 0: .* ar_fills [1-9][0-9]* ar_verifies [1-9][0-9]* ar_wrong 0\n"
               --report "r['summary']['wrong_total'] > 0"
               -- ${_ar} -b 512 -e 4K -f 8 -n 2 -w 1 -c 1 -T 3)
# Every type and op through the device check: the double's NCCL reduces in each type, the kernels' maths
# (exact for sum, prod, min, max; avg within its stated ULPs) finds no wrong element.
ga_double_test(allreduce_device_check_exact --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stderr "rank 1: .* ar_fills [1-9][0-9]* ar_verifies [1-9][0-9]* ar_wrong 0\n"
               --report "r['summary']['wrong_total'] == 0"
               -- ${_ar} -b 64 -e 1K -f 4 -n 1 -w 0 -c 1 -T 5 -d all -o all)

# Issue 47: NCCL's one-rank communicator answers fp8 avg with ncclInvalidArgument (found on an H200: the run
# aborted with exit 3 part-way through -d all -o all; the double answers alike). On one rank, -d all -o all leaves
# fp8 avg out and says so; asked for by name it is a usage error naming the reason.
ga_double_test(allreduce_fp8_avg_one_rank_all --np 1 --exit 0 --within 20
               --stdout "not run: f8e4m3 avg: NCCL's one-rank communicator has no fp8 average"
               --report "sum('avg not run: NCCL' in n for n in r['not_covered']) == 2"
               --report "r['summary']['wrong_total'] == 0 and not any(c['datatype'].startswith('f8') and c['op'] == 'avg' for c in r['summary']['combinations']) and any(c['datatype'] == 'f8e5m2' and c['op'] == 'min' for c in r['summary']['combinations'])"
               -- ${_ar} --collective reduce -b 64 -e 1K -f 4 -n 1 -w 0 -c 1 -T 5 -d all -o all)
ga_double_test(allreduce_fp8_avg_one_rank_named --np 1 --exit 2 --within 20
               --stderr-once "--datatype f8e4m3 --op avg on one rank: NCCL's one-rank communicator"
               -- ${_ar} -b 64 -e 1K -n 1 -w 0 -d f8e4m3 -o avg)

# gemm_flops: small GEMMs on two "GPUs"; the double's GEMM writes the same output on every rank.
set(_gf_args --backend gpu -d bf16,fp8 -m 64 -n 64 -k 64 --tolerance 90) # (timings: not under test)
set(_gf_burn --max-drop 100) # burn-mode only: without --duration it is a usage error (issue 27)
ga_double_test(gemm_healthy_burn --exit 0 --within 20
               --report "all(x['gemm']['fp8']['fast_accum'] is True for n in r['nodes'] for x in n['ranks'])"
               --report "all(g['gemms_checked'] > 1000 and g['gemms_mismatched'] == 0 for g in r['summary']['burn']['gpus'])"
               -- ${_gf} ${_gf_args} --iters 5 -w 1 --duration 0.6 --interval 0.2 ${_gf_burn})
# Defect 5: one corrupted GEMM among thousands in a burn interval (call 500 of rank 1; the measurement and the
# burn's warm-up take the first 13) is found and its GPU named, and only that GPU.
# The faults below count GEMMs from the start: --algos 1 keeps the candidates' timing from taking their turn.
ga_double_test(gemm_burn_one_corrupted_gemm --exit 1 --within 20
               --env GA_DOUBLE_GEMM_CORRUPT=500 --env GA_DOUBLE_FAULT_RANK=1
               --stdout "GEMM_SDC_MISMATCH.*rank 1 GPU 1"
               --absent "GEMM_SDC_MISMATCH.*rank 0 GPU 0"
               --report "[g['gemms_mismatched'] for g in r['summary']['burn']['gpus']] == [0, 1]"
               -- ${_gf} ${_gf_args} -d bf16 --iters 5 -w 1 --algos 1 --duration 0.6 --interval 0.2 ${_gf_burn})
# Issue 28 finding 12: the burn's TFLOP/s counts the GEMMs' own time, not that of the checksum kernel run after
# each. On the double each 64 x 64 x 64 GEMM takes 1 ms (5.24e-4 TFLOP/s) and each checksum 30 ms here: the mean
# interval figure used to be about 1/31 of that; now it is above a tenth of it (host scheduling on a loaded
# machine stretches the double's GEMMs, never its checksums' share out of the figure).
ga_double_test(gemm_burn_figure_excludes_checksums --exit 0 --within 30 --env GA_DOUBLE_CHECKSUM_US=30000
               --env GA_DOUBLE_GEMM_US=1000
               --report "sum(sum(g['interval_tflops']) / len(g['interval_tflops']) for g in r['summary']['burn']['gpus']) / len(r['summary']['burn']['gpus']) > 0.1 * 2 * 64**3 / 1e-3 / 1e12"
               -- ${_gf} ${_gf_args} -d bf16 --iters 20 -w 1 --duration 0.6 --interval 0.2)
# One GPU whose GEMMs fail during the burn: no hang, that GPU named.
ga_double_test(gemm_burn_gemm_fails --exit 1 --within 20
               --env GA_DOUBLE_GEMM_FAIL=20 --env GA_DOUBLE_FAULT_RANK=1
               --stdout "GEMM_RANK_FAILED.*rank 1: burn on GPU 1 \\(bf16 GEMM\\): cublasLtMatmul"
               -- ${_gf} ${_gf_args} -d bf16 --iters 5 -w 1 --algos 1 --duration 0.6 --interval 0.2 ${_gf_burn})
# Defect 4: a GPU whose measurement cannot start must still join the agreement before the burn (it used to
# skip the barrier and wait in the gather while the others waited in the barrier).
ga_double_test(gemm_measure_fails_before_burn --exit 1 --within 20
               --env GA_DOUBLE_LT_CREATE_FAIL=1 --env GA_DOUBLE_FAULT_RANK=1 --env GA_DOUBLE_TRACE=1
               --stdout "GEMM_RANK_FAILED.*rank 1: cublasLtCreate"
               -- ${_gf} ${_gf_args} -d bf16 --iters 5 -w 1 --duration 0.6 --interval 0.2 ${_gf_burn} --timeout 15)
# Defect 7: the iteration count is calibrated after the warm-up, whose first GEMM is slow (lazy loading).
ga_double_test(gemm_calibrated_after_warmup --exit 0 --within 20 --env GA_DOUBLE_GEMM_FIRST_US=300000
               --report "all(x['gemm']['bf16']['iters'] >= 100 for n in r['nodes'] for x in n['ranks'])"
               -- ${_gf} ${_gf_args} -d bf16 -w 2 --quick)

# Issue 47 item 3: --layout nn runs bf16 as C = A B (the double refuses fp8 unless TN, so fp8 measured at all
# proves it stayed TN) and --algos 4 times the heuristic's 4 candidates; the report records both per dtype.
set(_gf_algo "all(x['gemm'][d]['algorithm'][f] == v for n in r['nodes'] for x in n['ranks'] for d, f, v in")
ga_double_test(gemm_layout_nn_algos --exit 0 --within 20
               --report "${_gf_algo} [('bf16', 'layout', 'nn'), ('fp8', 'layout', 'tn'), ('bf16', 'candidates', 4), ('bf16', 'timed', 4), ('fp8', 'candidates', 4)])"
               --report "all(x['gemm'][d]['check_ok'] and x['gemm'][d]['algorithm']['id'] == 100 + x['gemm'][d]['algorithm']['chosen'] and {'tile', 'stages', 'splitk', 'swizzle'} <= set(x['gemm'][d]['algorithm']) for n in r['nodes'] for x in n['ranks'] for d in ('bf16', 'fp8'))"
               -- ${_gf} ${_gf_args} --iters 3 -w 1 --layout nn --algos 4)
# The heuristic's first candidate fails and its second has a state other than success; of the others the one
# at index 3 is the fastest (every other takes 5 ms more): it is chosen, and the GEMM measured with it.
ga_double_test(gemm_algos_fastest_working --exit 0 --within 30 --env GA_DOUBLE_ALGO_FAIL=0
               --env GA_DOUBLE_ALGO_BAD_STATE=1 --env GA_DOUBLE_ALGO_FAST=3 --env GA_DOUBLE_ALGO_SLOW_US=5000
               --report "${_gf_algo} [('bf16', 'chosen', 3), ('bf16', 'id', 103), ('bf16', 'candidates', 5), ('bf16', 'timed', 3)])"
               -- ${_gf} ${_gf_args} -d bf16 --iters 3 -w 1 --algos 5)
# The defaults, measured on an H200 (docs/measured-on-gpu.md, third run): NN, 8 candidates timed; fp8 TN.
# --algos 1 takes the heuristic's first untimed.
ga_double_test(gemm_algos_defaults --exit 0 --within 20
               --report "${_gf_algo} [('bf16', 'layout', 'nn'), ('bf16', 'candidates', 8), ('bf16', 'timed', 8), ('fp8', 'layout', 'tn')])"
               -- ${_gf} ${_gf_args} -d bf16,fp8 --iters 3 -w 1)
ga_double_test(gemm_algos_one_untimed --exit 0 --within 20
               --report "${_gf_algo} [('bf16', 'candidates', 1), ('bf16', 'timed', 0), ('bf16', 'chosen', 0)])"
               -- ${_gf} ${_gf_args} -d bf16 --iters 3 -w 1 --algos 1)
# The burn runs the heuristic's first algorithm on every GPU, whatever --algos timed: it compares output bits
# across GPUs, and a timed choice may differ between them (here rank 1's candidate 3 is by far the fastest).
ga_double_test(gemm_burn_same_algorithm --exit 0 --within 30 --env GA_DOUBLE_ALGO_FAST=3
               --env GA_DOUBLE_FAULT_RANK=1 --env GA_DOUBLE_ALGO_SLOW_US=3000
               --absent "GEMM_SDC_MISMATCH"
               -- ${_gf} ${_gf_args} -d bf16 --iters 3 -w 1 --duration 0.6 --interval 0.2 ${_gf_burn})

# mem_bw. Defect 11: the host-link tests start together on every GPU of a node, even when one GPU's device
# tests take a second longer (each of rank 1's 5 device copies takes 0.2 s more). The double stamps each
# rank's first host-to-device copy. (The slow GPU is the lower of two that differ: a warning naming both, since two
# GPUs never blame one (issue 32); exit 0. Every remeasurement pass goes through both node barriers.)
ga_double_test(mem_bw_host_link_aligned --exit 0 --within 20
               --env GA_DOUBLE_TRACE=1 --env GA_DOUBLE_D2D_US=200000 --env GA_DOUBLE_FAULT_RANK=1
               --aligned "first host-to-device copy queued at ([0-9.]+)" 2 0.15
               --stdout "MEM_PEERS_DIFFER.*rank 1 GPU 1 has device_copy"
               --report "all(len(x['bandwidth']['device_copy']['measurements']) == 3 for n in r['nodes'] for x in n['ranks'])"
               -- ${_mb} --backend gpu --quick --size 1M --pinned-size 256K)
# A healthy run: the GPU path's kernels (stand-ins on the double) leave what the checks expect.
ga_double_test(mem_bw_healthy_checks --exit 0 --within 20 --absent "FAILED"
               --env LD_LIBRARY_PATH=$<TARGET_FILE_DIR:ga_nvml_double>
               --report "all(t['check_ok'] for n in r['nodes'] for x in n['ranks'] for t in x['bandwidth'].values()) and len(r['nodes'][0]['ranks'][0]['bandwidth']) == 4"
               --report "all(x['pcie_link'] == {'gen_under_load': 5, 'width_under_load': 16, 'max_gen': 5, 'max_width': 16} for n in r['nodes'] for x in n['ranks'])"
               -- ${_mb} --backend gpu --quick --size 1M --pinned-size 256K --tolerance 100)

# Issue 47 item 3: --triad-kernel picks the GPU triad's kernel; each runs on the double (the flat kernel's stand-in
# by its index map over the grid launched), the device verify passes, the record and --verbose name the kernel.
# --size 1000000: 62500 double2, not a multiple of the flat kernel's 1024 per block, so its tail is checked.
foreach(_k grid restrict flat)
  ga_double_test(mem_bw_triad_kernel_${_k} --exit 0 --within 20 --absent "FAILED"
                 --stdout "triad kernel on GPU 0: ${_k}$"
                 --report "all(x['bandwidth']['device_rw']['check_ok'] and x['bandwidth']['device_rw']['kernel'] == '${_k}' for n in r['nodes'] for x in n['ranks'])"
                 -- ${_mb} --backend gpu --quick --size 1000000 --pinned-size 256K --tolerance 100 --verbose
                    --triad-kernel ${_k})
endforeach()
# Without the option: flat, the fastest of the three on an H200 (docs/measured-on-gpu.md, third run).
ga_double_test(mem_bw_triad_kernel_default --exit 0 --within 20 --absent "FAILED"
               --report "all(x['bandwidth']['device_rw']['kernel'] == 'flat' for n in r['nodes'] for x in n['ranks'])"
               -- ${_mb} --backend gpu --quick --size 1000000 --pinned-size 256K --tolerance 100)
# A name that is none of them: exit 2, one line saying which are.
ga_double_test(mem_bw_triad_kernel_unknown --exit 2 --within 20
               --stderr-once "'warp' is not one of grid, restrict, flat"
               -- ${_mb} --backend gpu --quick --size 1M --triad-kernel warp)

# Issue 28 finding 10: a PCIe link trained below its generation (Gen4 in a Gen5 slot) passed: node_health sees
# an idle GPU, whose link downshifts anyway. mem_bw samples NVML (the NVML double) while its host-link copies
# run: GPU 1 is named, GPU 0 is not (before: no finding, exit 0).
ga_double_test(mem_bw_pcie_trained_below --exit 1 --within 20
               --env LD_LIBRARY_PATH=$<TARGET_FILE_DIR:ga_nvml_double> --env GA_DOUBLE_NVML_TRAINED_GEN=4
               --env GA_DOUBLE_NVML_GPU=1
               --stdout "MEM_PCIE_DEGRADED.*rank 1 GPU 1: PCIe link at Gen4 x16 while copying, the GPU and its slot can do Gen5 x16"
               --absent "MEM_PCIE_DEGRADED.*GPU 0"
               -- ${_mb} --backend gpu --quick --size 1M --pinned-size 256K --tolerance 100)

# Out of device memory (issue 18): the double's cudaMalloc fails for a buffer it cannot allocate on the host, as
# cudaMalloc does beyond the GPU's memory. Every rank exits 5 and one line names the rank, as on the host path.
ga_double_test(mem_bw_gpu_out_of_memory --exit 5 --within 20
               --stderr "\\[FATAL\\] [^ ]+ rank 0 \\(.*out of memory" --absent "MEM_RANK_FAILED"
               -- ${_mb} --backend gpu --size 1T --pinned-size 256K)

# env_audit's GPU queries (device count, properties, runtime and NCCL versions) on the double.
ga_double_test(env_audit_gpu_queries --exit 0 --within 20 --stdout "2 ranks, 8 GPUs" --stdout "NCCL 2\\.[0-9]+"
               -- ${GA_BIN_DIR}/env_audit)

# Defect 2: no host sleep per NCCL call. The double answers ncclInProgress to every call on a non-blocking
# communicator, as NCCL 2.28 does; the communicators must be blocking and the waits spin, so a collective of
# 8 bytes on the double takes microseconds, not the 200 us poll interval the non-blocking path slept.
ga_double_test(allreduce_no_sleep_per_call --exit 0 --within 20
               --report "all(x['time_us'] < 100 for x in r['summary']['results'])"
               -- ${_ar} -b 8 -e 8 -n 1000 -w 5 -c 1 -T 5)

# Defect 12: a failing cudaEventRecord makes the timing a failure (it used to be ignored, and the events'
# stale times read as a measurement), on one GPU only.
ga_double_test(mem_bw_event_record_fails --exit 1 --within 20
               --env GA_DOUBLE_EVENT_RECORD_FAIL=1 --env GA_DOUBLE_FAULT_RANK=1
               --report "[x['bandwidth']['device_copy']['state'] for n in r['nodes'] for x in n['ranks']] == ['measured', 'failed']"
               -- ${_mb} --backend gpu --quick --size 1M --pinned-size 256K --tolerance 100)
ga_double_test(gemm_event_record_fails --exit 1 --within 20
               --env GA_DOUBLE_EVENT_RECORD_FAIL=1 --env GA_DOUBLE_FAULT_RANK=1
               --report "[x['gemm']['bf16']['state'] for n in r['nodes'] for x in n['ranks']] == ['measured', 'failed']"
               -- ${_gf} ${_gf_args} -d bf16 --iters 5 -w 1)

# nccl-tests' -G, -R, -x, -y, -u, -M on the GPU path (issue 15). The double counts, per process, what the run
# did with graphs, registrations and streams, and prints it at exit (GA_DOUBLE_TRACE). Orchestration only.
# 4 sizes x 2 placements: one timed graph of -n 3 operations launched 3 times, and one graph of one operation
# per check: 16 captures, instantiations and destructions, 8 x 3 + 8 = 32 launches; 8 warm-up calls + 8 x 3 x 3
# timed + 8 checked = 88 collectives run, from 8 + 8 x 3 + 8 = 40 calls, on the own stream. The buffers shift by
# the size at every operation (nccl-tests'): the 8-byte size's shifts of 8 and 24 bytes are off 16 bytes (4).
set(_ar_small -b 8 -e 4K -f 8 -n 3 -w 1 -c 1 -T 3)
ga_double_test(allreduce_cuda_graphs --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stdout "graph: 3 unalign: 0"
               --stderr "rank 0: captures 16 instantiated 16 launches 32 execs_destroyed 16 graphs_destroyed 16 "
               --stderr "rank 1: captures 16 instantiated 16 launches 32 execs_destroyed 16 graphs_destroyed 16 "
               --stderr "rank 1: .* default_stream_colls 0 colls 40 unaligned_colls 4 issued 88"
               --report "r['summary']['wrong_total'] == 0"
               -- ${_ar} ${_ar_small} -G 3)
# -R 1: both buffers from ncclMemAlloc, registered after the communicator is made and deregistered before it
# goes, on every rank; -M 1: nccl-tests' memory line (the double's communicator holds 64 MiB, the buffers are
# 2 x 4 KiB, nothing more is taken while the collectives run).
ga_double_test(allreduce_register_local --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stdout "# GPU memory usage     : Initialization 64.0 MB \\| User-Allocated 8.00 KB \\| Collective 0.00 B \\| Total  64.0 MB\n#\n# Collective test concluded"
               --stderr "rank 0: .* registered 2 deregistered 2 windows 0 windows_freed 0 mem_allocs 2 mem_frees 2 "
               --stderr "rank 1: .* registered 2 deregistered 2 windows 0 windows_freed 0 mem_allocs 2 mem_frees 2 "
               -- ${_ar} ${_ar_small} -R 1 -M 1)
# -R 2: symmetric windows instead; -x 2: every communicator made with CTAPolicy NCCL_CTA_POLICY_ZERO.
ga_double_test(allreduce_register_symmetric --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stderr "ncclCommInitRankConfig rank 0 of 2 CTAPolicy 2"
               --stderr "ncclCommInitRankConfig rank 1 of 2 CTAPolicy 2"
               --stderr "rank 0: .* registered 0 deregistered 0 windows 2 windows_freed 2 mem_allocs 2 mem_frees 2 "
               --stderr "rank 1: .* registered 0 deregistered 0 windows 2 windows_freed 2 mem_allocs 2 mem_frees 2 "
               -- ${_ar} ${_ar_small} -R 2 -x 2)
# -y 1 -u 1: every collective on the default stream, every one with buffers one element off their alignment,
# and the check still right (int32, one of the types the double computes).
ga_double_test(allreduce_stream_null_unalign --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stdout "graph: 0 unalign: 1"
               --stderr "rank 0: .* default_stream_colls ([1-9][0-9]*) colls \\1 unaligned_colls \\1 "
               --stderr "rank 1: .* default_stream_colls ([1-9][0-9]*) colls \\1 unaligned_colls \\1 "
               --report "r['summary']['wrong_total'] == 0"
               -- ${_ar} ${_ar_small} -y 1 -u 1 -d int32)
# Each of those calls failing on one rank ends the run cleanly: exit 3 naming the call, not a hang.
foreach(_f cudaStreamBeginCapture:2 cudaStreamEndCapture:3 cudaGraphInstantiate:1 cudaGraphLaunch:4)
  string(REPLACE ":" ";" _fn "${_f}")
  list(GET _fn 0 _fn)
  ga_double_test(allreduce_graph_fails.${_fn} --exit 3 --within 10 --env GA_DOUBLE_FAIL=${_f}
                 --env GA_DOUBLE_FAULT_RANK=1 --stderr "\\[FATAL\\] [^ ]+ rank 1 .*${_fn}"
                 -- ${_ar} ${_ar_small} -G 2)
endforeach()
foreach(_f ncclMemAlloc:2 ncclCommRegister:1 ncclCommWindowRegister:2)
  string(REPLACE ":" ";" _fn "${_f}")
  list(GET _fn 0 _fn)
  set(_mode 1)
  if(_fn STREQUAL "ncclCommWindowRegister")
    set(_mode 2)
  endif()
  ga_double_test(allreduce_register_fails.${_fn} --exit 3 --within 10 --env GA_DOUBLE_FAIL=${_f}
                 --env GA_DOUBLE_FAULT_RANK=1 --env GA_DOUBLE_TRACE=1
                 --stderr "\\[FATAL\\] [^ ]+ rank 1 .*${_fn} of the (send|receive) buffer on NCCL communicator 'world'"
                 --stderr "ncclCommAbort \\(rank 1 of 2\\)"
                 -- ${_ar} ${_ar_small} -R ${_mode})
endforeach()
# A collective inside a launched graph that never completes: the wait after the launches ends at -T (exit 4).
# (AllReduce 5 of rank 1 is in the second launch of the first size's timed graph.)
ga_double_test(allreduce_graph_collective_never_completes --exit 4 --within 10
               --env GA_DOUBLE_NCCL_HANG=AllReduce:5 --env GA_DOUBLE_FAULT_RANK=1
               --stderr "timeout: allreduce float sum 8 B out-of-place \\(world, rank [01] of 2\\) on NCCL communicator 'world' \\(rank [01] of 2\\) did not complete within 2 s"
               -- ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 1 -T 2 -G 2)
# -G with -I cannot be honoured (nccl-tests disables -I): a usage error on the GPU path.
ga_double_test(allreduce_graphs_with_per_iter --exit 2 --within 10
               --stderr "-G 2: CUDA graph launches cannot be combined with -I or -z"
               -- ${_ar} ${_ar_small} -G 2 -I 1)

# Issue 28, comparability with nccl-tests 2.19 (orchestration on the double, no figure): every communicator made
# with nvlinkCentricSched 1 (finding 5); both buffers from ncclMemAlloc without -R (6); one untimed operation per
# size and placement even with -w 0: 2 sizes x 2 placements x (1 + 8) = 36 collectives (15); the buffers shift by
# the size at every operation through the 64-byte allocation: 8 addresses per placement of the 8-byte size, 16 in
# all (8). Before: UNDEF, 0 allocations, 32 collectives, 2 addresses.
ga_double_test(allreduce_like_nccl_tests --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stderr "ncclCommInitRankConfig rank 1 of 2 CTAPolicy [-0-9]+ nvlinkCentricSched 1 "
               --stderr "rank 1: .* mem_allocs 2 mem_frees 2 .* issued 36 .* distinct_inputs 16"
               -- ${_ar} -b 8 -e 64 -f 8 -n 8 -w 0 -c 0 -T 5)
# -m 4: each iteration's 4 operations in one group (finding 7): 2 placements x 3 iterations = 6 groups of 4
# (the warm-up and the check are single operations). Before: no group.
ga_double_test(allreduce_grouped_aggregation --exit 0 --within 20 --env GA_DOUBLE_TRACE=1
               --stderr "rank 0: .* groups 6 grouped_colls 24 max_group 4 "
               --report "r['summary']['wrong_total'] == 0"
               -- ${_ar} -b 512 -e 512 -n 3 -w 1 -c 1 -m 4 -T 5)
# Out of device memory (finding 16): ncclMemAlloc of 2 x 512 MiB on a 1 GiB GPU fails as NCCL's does; exit 5,
# one [FATAL] line saying so (before: cudaMalloc, exit 3).
ga_double_test(allreduce_gpu_out_of_memory --exit 5 --within 20 --env GA_DOUBLE_GPU_MEM_GIB=1
               --stderr "\\[FATAL\\] [^ ]+ rank [01] .*ncclMemAlloc of the (send|receive) buffer .*out of memory"
               -- ${_ar} -b 512M -e 512M -n 1 -w 0 -c 0 -T 5)
# The transport NCCL chose (issue 25): the double writes NCCL's debug lines (double_nccl_log.c) for a network
# chosen by GA_DOUBLE_NET, and GA_DOUBLE_NCCL_NODES=2 makes its communicators span two nodes as NCCL counts them
# (on this one machine every rank's host is the same: a fallback on one node of a real multi-node run is
# cluster.transport_double_fallback). The program reads the lines from the per-rank file it directed them to.
set(_tr_ar ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 1 -T 5)
# (The pairs' figures are host scheduling noise that may name a slow link, as in allreduce_node_and_pairs.)
ga_double_test(allreduce_transport_ib_gdr --np 4 --exit 0 --exit 1 --within 30 --env GA_DOUBLE_NCCL_NODES=2
               --stdout "transport between nodes: IB, GDR all on 1 of 1 nodes"
               --report "r['transport']['multi_node'] and r['transport']['ib_exercised']"
               --report "r['transport']['nodes'][0]['between_nodes']['networks'] == ['IB']"
               --report "r['transport']['nodes'][0]['between_nodes']['devices'] == ['mlx5_0:1', 'mlx5_1:1']"
               --report "r['transport']['nodes'][0]['between_nodes']['gdr'] == 'all'"
               --report "r['transport']['nodes'][0]['inside_node'] == {'paths': ['P2P'], 'link': 'NVLink'}"
               --report "r['transport']['nodes'][0]['communicators']['world']['communicators'] == 4"
               --report "r['transport']['nodes'][0]['communicators']['pairs']['spanning_nodes'] >= 1"
               --report "all(f['code'] in ('COMM_SLOW_LINK', 'COMM_SLOW_NODE') for f in r['findings'])"
               -- ${_tr_ar} --pattern world,node,pairs --rounds 1 --expect-net ib-gdr)
# --pattern rails on the NCCL path (issue 46, item 1), 3 nodes of 2 ranks faked (GPUACCEPT_TEST_RANKS_PER_NODE)
# and spanning 3 nodes as the double's NCCL counts them: every rail pair's ends carry the NIC of the transport
# record (the double logs its device by the communicator's local rank, so every rail says mlx5_0:1 here; real
# NCCL uses GPU i's own NIC). Orchestration only: the figures are the double's.
ga_double_test(allreduce_rails_nic --np 6 --exit 0 --exit 1 --within 30 --env GA_DOUBLE_NCCL_NODES=3
               --env GPUACCEPT_TEST_RANKS_PER_NODE=2
               --report "r['summary']['backend'] == 'nccl' and len(r['rails']['pairs']) == 6"
               --report "all(n == 'mlx5_0:1' for p in r['rails']['pairs'] for n in p['nics'])"
               -- ${_tr_ar} --pattern rails)
# one rank late (node 2, GPU 1): named alone, with its NIC
ga_double_test(allreduce_rails_slow_rank --np 6 --exit 1 --within 60 --env GA_DOUBLE_NCCL_NODES=3
               --env GPUACCEPT_TEST_RANKS_PER_NODE=2 --env GPUACCEPT_TEST_DELAY_RANK=5
               --env GPUACCEPT_TEST_DELAY_US=100000
               --report "[(f['code'], f['rank']) for f in r['findings']] == [('COMM_SLOW_RAIL', 5)]"
               --report "r['findings'][0]['message'].startswith(r['findings'][0]['host'] + ' GPU 1 (mlx5_0:1): ')"
               -- ${_ar} -b 1K -e 64K -f 8 -n 3 -w 1 -c 1 -T 5 --pattern rails)
# Sockets between the nodes where InfiniBand is expected: a failure, not a pass.
ga_double_test(allreduce_transport_socket_fallback --np 4 --exit 1 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env GA_DOUBLE_NET=Socket
               --stdout "fail COMM_TRANSPORT_FALLBACK on vm: NCCL sent its inter-node traffic over sockets"
               --report "[f['code'] for f in r['findings']] == ['COMM_TRANSPORT_FALLBACK']"
               --report "r['transport']['nodes'][0]['between_nodes']['networks'] == ['Socket']"
               -- ${_tr_ar} --expect-net ib)
# Issue 40, finding 10: the OFI network plugin is RDMA only when its log names an RDMA libfabric provider.
# Over libfabric's tcp provider it is the fallback to sockets; with no provider said it is unknown; neither
# passes --expect-net ib (before the fix: both passed, any plugin but IB and Socket counting as RDMA). Over
# efa it passes.
ga_double_test(allreduce_transport_ofi_tcp --np 4 --exit 1 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env GA_DOUBLE_NET=OFI_TCP
               --stdout "fail COMM_TRANSPORT_FALLBACK on vm: NCCL sent its inter-node traffic over sockets \\(network AWS Libfabric, libfabric provider tcp"
               --report "[f['code'] for f in r['findings']] == ['COMM_TRANSPORT_FALLBACK']"
               --report "r['transport']['nodes'][0]['between_nodes']['provider'] == 'tcp'"
               -- ${_tr_ar} --expect-net ib)
ga_double_test(allreduce_transport_ofi_unknown --np 4 --exit 1 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env GA_DOUBLE_NET=OFI
               --report "[f['code'] for f in r['findings']] == ['COMM_TRANSPORT_UNKNOWN']"
               --report "not r['transport']['ib_exercised']"
               -- ${_tr_ar} --expect-net ib)
ga_double_test(allreduce_transport_ofi_efa --np 4 --exit 0 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env GA_DOUBLE_NET=OFI_EFA
               --report "r['transport']['ib_exercised'] and r['findings'] == []"
               --report "r['transport']['nodes'][0]['between_nodes']['networks'] == ['AWS Libfabric']"
               --report "r['transport']['nodes'][0]['between_nodes']['provider'] == 'efa'"
               -- ${_tr_ar} --expect-net ib)
# Issue 40, finding 10: --ib-hcas, the compute ports. The double's NCCL sends between its two nodes on
# mlx5_<local rank>:1 (double_nccl_log.c): a list without mlx5_0 makes that a device outside the compute ports,
# COMM_NET_NOT_COMPUTE naming the node (before: no such option, and nothing compared the devices); a list that
# keeps it passes, a subset of the list used being no fault.
ga_double_test(allreduce_transport_not_compute --np 2 --exit 1 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --stdout "fail COMM_NET_NOT_COMPUTE on vm: NCCL used mlx5_0:1 between nodes, not a compute port \\(--ib-hcas =mlx5_3,mlx5_4\\)"
               --report "[f['code'] for f in r['findings']] == ['COMM_NET_NOT_COMPUTE']"
               --report "r['transport']['ib_hcas']['nodes_outside'] == 1"
               -- ${_tr_ar} --expect-net ib-gdr --ib-hcas =mlx5_3,mlx5_4)
ga_double_test(allreduce_transport_compute_kept --np 2 --exit 0 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --report "r['findings'] == [] and r['transport']['ib_hcas']['nodes_kept'] == 1"
               --report "r['transport']['nodes'][0]['between_nodes']['compute_hcas'] == 'kept'"
               -- ${_tr_ar} --expect-net ib-gdr --ib-hcas =mlx5_0,mlx5_3)
# NCCL_IB_DISABLE=1 in a multi-node run that expects InfiniBand is not a pass ...
ga_double_test(allreduce_transport_ib_disabled --np 4 --exit 1 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env NCCL_IB_DISABLE=1
               --stdout "COMM_TRANSPORT_FALLBACK on vm: .*, and NCCL_IB_DISABLE=1 is set"
               --report "r['transport']['nodes'][0]['between_nodes']['forced_by'] == 'NCCL_IB_DISABLE=1'"
               -- ${_tr_ar} --expect-net ib)
# ... unless it is said to be intended, and then the report says so.
ga_double_test(allreduce_transport_sockets_intended --np 4 --exit 0 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env NCCL_IB_DISABLE=1 --stdout "sockets intended \\(--allow-sockets\\)"
               --report "r['transport']['sockets_intended'] and not r['transport']['ib_exercised']"
               --report "'intended' in r['transport']['ib_not_exercised_why']"
               -- ${_tr_ar} --expect-net ib --allow-sockets)
# InfiniBand without GPUDirect RDMA where the SKU requires it: COMM_GDR_UNUSED.
ga_double_test(allreduce_transport_no_gdr --np 4 --exit 1 --within 20 --env GA_DOUBLE_NCCL_NODES=2
               --env GA_DOUBLE_NET=IB
               --report "[f['code'] for f in r['findings']] == ['COMM_GDR_UNUSED']"
               --report "r['transport']['nodes'][0]['between_nodes']['gdr'] == 'none'"
               -- ${_tr_ar} --expect-net ib-gdr)
# A NCCL_DEBUG_FILE of the user's without %p (the ranks of a node would share it) is not read: the report says
# why (in a multi-node run under --expect-net ib that is COMM_TRANSPORT_UNKNOWN, no pass: common.transport).
ga_double_test(allreduce_transport_shared_debug_file --np 4 --exit 0 --within 20
               --env NCCL_DEBUG_FILE=${CMAKE_CURRENT_BINARY_DIR}/nccl-shared.log
               --report "'has no %p' in r['transport']['nodes'][0]['log']"
               -- ${_tr_ar} --expect-net ib)
# ddp_smoke records the transport of its gradient allreduce (allreduce_bw is the one that checks it). The
# double's GEMMs compute nothing, so the loss does not fall (exit 1): only the record is checked here.
ga_double_test(ddp_transport_recorded --np 4 --exit 1 --within 30 --env GA_DOUBLE_NCCL_NODES=2
               --env GA_DOUBLE_NET=RoCE_GDR
               --report "r['transport']['nodes'][0]['between_nodes']['networks'] == ['RoCE']"
               --report "r['transport']['nodes'][0]['communicators']['other']['communicators'] == 4"
               -- ${_ddp} --backend gpu --quick --steps 5)
# No silent host fallback: the CUDA runtime (the double, GA_DOUBLE_GPUS=0) sees no device, and a GPU-only
# option is exit 3 with one line and no report, not a host-path pass with the option dropped.
ga_double_test(gemm_gpu_only_no_gpu --exit 3 --within 20 --env GA_DOUBLE_GPUS=0
               --stderr "^gemm_flops: a GPU is needed for --datatype bf16 and --min-efficiency 60, and no rank sees one"
               --absent "COMPUTE. report: "
               -- ${_gf} --datatype bf16 --min-efficiency 60 --quick)
ga_double_test(mem_bw_gpu_only_no_gpu --exit 3 --within 20 --env GA_DOUBLE_GPUS=0
               --stderr "^mem_bw: a GPU is needed for --min-efficiency 70, and no rank sees one"
               --absent "COMPUTE. report: "
               -- ${_mb} --min-efficiency 70 --quick)

# Issue 40, finding 4: one GPU bound per rank (Slurm --gpus-per-task=1, --gpu-bind, a CUDA_VISIBLE_DEVICES per
# rank): every rank's GPU is CUDA device 0, a different physical GPU on each. The GEMMs of the third GPU
# (bus 0x12) fail in the burn: the finding names it by its PCI bus id, the summary has one row per GPU (by bus
# id) of which that one alone fails, and drain.sh and the Prometheus file name it by its bus id. (Before the fix:
# all four GPUs were "GPU 0", one summary row.)
ga_double_test(gemm_gpu_per_rank_named_by_pci --np 4 --exit 1 --within 30
               --env GA_DOUBLE_GPU_PER_RANK=1 --env GA_DOUBLE_GEMM_FAIL=20 --env GA_DOUBLE_FAULT_RANK=2
               --stdout "GEMM_RANK_FAILED.*rank 2"
               --report "[f.get('pci_bus_id') for f in r['findings'] if f['code'] == 'GEMM_RANK_FAILED'] == ['0000:12:00.0']"
               --report "sorted(x['device']['pci_bus_id'] for n in r['nodes'] for x in n['ranks']) == ['0000:10:00.0', '0000:11:00.0', '0000:12:00.0', '0000:13:00.0']"
               --report "all(x['device']['index'] == 0 and x['device']['node_index'] is None for n in r['nodes'] for x in n['ranks'])"
               --check ${GA_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_per_rank.py $<TARGET_FILE:gpuaccept>
                       ${CMAKE_CURRENT_BINARY_DIR}/reports/gemm_gpu_per_rank_named_by_pci 4 0000:12:00.0 GEMM_RANK_FAILED --
               -- ${_gf} ${_gf_args} -d bf16 --iters 5 -w 1 --duration 0.6 --interval 0.2 ${_gf_burn})
# The same run with node_health's report merged beside it (the NVML double's GPU n is at bus 0x10 + n, PCIe
# replays on GPU 2): the rows show NVML's index beside the bus id, and node_health's finding on GPU 2 and
# gemm_flops' on CUDA device 0 of rank 2 land on one row, "GPU 2 (0000:12:00.0)". (Before the fix: one row
# "GPU 0" for gemm_flops' four GPUs, node_health's finding on a row "GPU 2" of its own.)
ga_double_test(gemm_gpu_per_rank_with_node_health --np 4 --exit 1 --within 40
               --env GA_DOUBLE_GPU_PER_RANK=1 --env GA_DOUBLE_GEMM_FAIL=20 --env GA_DOUBLE_FAULT_RANK=2
               --check ${GA_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_per_rank.py $<TARGET_FILE:gpuaccept>
                       ${CMAKE_CURRENT_BINARY_DIR}/reports/gemm_gpu_per_rank_with_node_health 4 0000:12:00.0
                       GEMM_RANK_FAILED --node-health "${_dbl_mpiexec}" ${GA_BIN_DIR}/node_health
                       $<TARGET_FILE_DIR:ga_nvml_double> ${GA_SOURCE_DIR}/ctest/node_health/data/trees/healthy
                       ${GA_SOURCE_DIR}/ctest/node_health/data/logs/healthy.log HEALTH_PCIE_REPLAYS --
               -- ${_gf} ${_gf_args} -d bf16 --iters 5 -w 1 --duration 0.6 --interval 0.2 ${_gf_burn})
# Issue 40, finding 4: CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; on the double
# (GA_DOUBLE_FASTEST_FIRST_REVERSED) that order runs against the bus order. Every program sets PCI_BUS_ID before
# the runtime starts, so CUDA device n is the GPU at bus 0x10 + n, NVML's GPU n, and the report says who set the
# order. (Before the fix: device 0 was the GPU at bus 0x17, and nothing said so.)
set(_order_check "all(x['device']['pci_bus_id'] == '0000:%02x:00.0' % (0x10 + x['device']['index']) and x['device']['node_index'] == x['device']['index'] for n in r['nodes'] for x in n['ranks'])")
ga_double_test(gemm_cuda_device_order_pci --exit 0 --within 20 --env GA_DOUBLE_FASTEST_FIRST_REVERSED=1
               --report "r['cuda_device_order'] == {'value': 'PCI_BUS_ID', 'set_by': 'gpuaccept'}"
               --report "${_order_check}"
               -- ${_gf} ${_gf_args} -d bf16 -w 1 --quick)
# A user's own CUDA_DEVICE_ORDER is kept and recorded; the ordinal is then not taken for the GPU's index on the
# node (node_index null), and the bus id still names the GPU CUDA numbered 0.
ga_double_test(gemm_cuda_device_order_user --exit 0 --within 20 --env GA_DOUBLE_FASTEST_FIRST_REVERSED=1
               --env CUDA_DEVICE_ORDER=FASTEST_FIRST
               --report "r['cuda_device_order'] == {'value': 'FASTEST_FIRST', 'set_by': 'user'}"
               --report "all(x['device']['node_index'] is None and x['device']['pci_bus_id'] == '0000:%02x:00.0' % (0x17 - x['device']['index']) for n in r['nodes'] for x in n['ranks'])"
               -- ${_gf} ${_gf_args} -d bf16 -w 1 --quick)

# Issue 46 item 2, the GPU path of mem_bw --p2p: IPC handles exchanged within the node, every ordered pair of
# the node's 4 GPUs copied alone, timed by events (before: "not built yet", no pair). The double's buffers
# are shared memory, so a peer's handle opens in another rank (gd_ipc.c). Healthy: 12 pairs, none named.
set(_mb_p2p ${_mb} --backend gpu --quick --size 8M --pinned-size 256K --iters 2 --p2p --tolerance 90 -T 20)
ga_double_test(mem_bw_p2p_healthy --np 4 --exit 0 --within 30 --absent "MEM_P2P"
               --report "len(r['p2p']['pairs']) == 12 and all(p['state'] == 'copied' and p['GBps'] > 0 and not p['slow'] for p in r['p2p']['pairs'])"
               -- ${_mb_p2p})
# One pair slowed by the double (each copy of rank 1 into rank 3's buffer 50 ms more): that pair alone named.
ga_double_test(mem_bw_p2p_slow_pair --np 4 --exit 1 --within 30
               --env GA_DOUBLE_FAULT_RANK=1 --env GA_DOUBLE_P2P_PEER=3 --env GA_DOUBLE_P2P_US=50000
               --stdout "MEM_P2P_SLOW.* GPU1->GPU3: "
               --report "[[p['src'], p['dst']] for p in r['p2p']['pairs'] if p['slow']] == [[1, 3]] and r['p2p']['pairs_named'] == 1"
               -- ${_mb_p2p})
# GPU 2 without peer access (cudaDeviceCanAccessPeer): its 6 pairs not copied, each its own finding, a
# failure since --min-p2p says the SKU's GPUs reach each other; the other pairs copied.
ga_double_test(mem_bw_p2p_no_peer_access --np 4 --exit 1 --within 30 --env GA_DOUBLE_NO_PEER_GPU=2
               --stdout "MEM_P2P_UNAVAILABLE.* GPU2->GPU0: not copied, no peer access between the two GPUs"
               --report "sorted([p['src'], p['dst']] for p in r['p2p']['pairs'] if p['state'] == 'no peer access') == [[0, 2], [1, 2], [2, 0], [2, 1], [2, 3], [3, 2]]"
               --report "sum(p['state'] == 'copied' for p in r['p2p']['pairs']) == 6 and not any(p['slow'] for p in r['p2p']['pairs'])"
               -- ${_mb_p2p} --min-p2p 0.001)
# A handle that cannot be opened (cudaIpcOpenMemHandle's cudaErrorMapBufferObjectFailed on rank 0): rank 0's
# 3 pairs said as not copied with CUDA's error, a warning without --min-p2p; every rank ends cleanly.
ga_double_test(mem_bw_p2p_ipc_open_fails --np 4 --exit 0 --within 30
               --env GA_DOUBLE_IPC_OPEN_FAIL=1 --env GA_DOUBLE_FAULT_RANK=0
               --stdout "MEM_P2P_UNAVAILABLE.* GPU0->GPU1: not copied, the copy failed \\(cudaIpcOpenMemHandle: "
               --report "sorted([p['src'], p['dst']] for p in r['p2p']['pairs'] if p['state'] == 'copy failed') == [[0, 1], [0, 2], [0, 3]]"
               -- ${_mb_p2p})
# A copy that does not finish (60 s into rank 3's buffer): its wait ends at -T, and the job with exit 4 naming
# the copy (before: the GPU path copied nothing, exit 0).
ga_double_test(mem_bw_p2p_copy_never_finishes --np 4 --exit 4 --within 15
               --env GA_DOUBLE_FAULT_RANK=0 --env GA_DOUBLE_P2P_PEER=3 --env GA_DOUBLE_P2P_US=60000000
               --stderr "timeout: --p2p copy GPU0->GPU3 of the node \\(cudaMemcpyAsync into the peer's IPC buffer\\) did not complete within 2 s"
               -- ${_mb} --backend gpu --quick --size 8M --pinned-size 256K --iters 2 --p2p -T 2)
