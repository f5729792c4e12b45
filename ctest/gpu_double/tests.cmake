# The scenarios (included by CMakeLists.txt). Programs run with small sizes; -T and the other bounds are short
# so that a hang is seen in seconds.
set(_ar ${GA_BIN_DIR}/allreduce_bw)
set(_gf ${GA_BIN_DIR}/gemm_flops)
set(_mb ${GA_BIN_DIR}/mem_bw)
set(_ddp ${GA_BIN_DIR}/ddp_smoke)

# Healthy runs: the GPU path runs end to end on the double and passes.
ga_double_test(allreduce_healthy --exit 0 --report "r['summary']['backend'] == 'nccl'"
               -- ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 2 -T 5)

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
# ddp_smoke's --comm-timeout bounds its gradient allreduce the same way.
ga_double_test(ddp_comm_timeout --exit 4 --within 12 --env GA_DOUBLE_NCCL_HANG=AllReduce
               --stderr "did not complete within 2 s"
               --stderr "NCCL communicator 'ddp_smoke gradients'"
               -- ${_ddp} --backend gpu --quick --steps 5 --comm-timeout 2)

# Defect 3: with -c 2, the rank that sees a wrong element must still issue the second check's collective,
# or the other ranks wait for it forever. No hang: exit 1, the finding names the rank.
ga_double_test(allreduce_check_wrong_rank_no_hang --exit 1 --within 10 --env ALLREDUCE_BW_TEST_WRONG_RANK=1
               --stdout "COMM_WRONG_RESULT.*rank 1 on"
               --report "r['summary']['wrong_total'] > 0"
               -- ${_ar} -b 512 -e 4K -f 8 -n 2 -w 1 -c 2 -T 3)
