# The scenarios (included by CMakeLists.txt). Programs run with small sizes; -T and the other bounds are short
# so that a hang is seen in seconds.
set(_ar ${GA_BIN_DIR}/allreduce_bw)
set(_gf ${GA_BIN_DIR}/gemm_flops)
set(_mb ${GA_BIN_DIR}/mem_bw)
set(_ddp ${GA_BIN_DIR}/ddp_smoke)

# Healthy runs: the GPU path runs end to end on the double and passes.
ga_double_test(allreduce_healthy --exit 0 --report "r['summary']['backend'] == 'nccl'"
               -- ${_ar} -b 8 -e 4K -f 8 -n 3 -w 1 -c 2 -T 5)
