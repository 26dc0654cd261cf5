"""Names of real TileLang's `T` namespace seen in its examples and docs; calls to them are never
reported as unknown builtins, even where the catalog does not describe them (they parse as opaque calls).
"""
from __future__ import annotations

LAUNCH_BUILTINS = ("Kernel", "ClusterKernel")  # the `with T.<name>(...)` calls that open a kernel body

KNOWN_T = frozenset("""
Buffer Cast ClusterKernel Fragment FragmentBuffer GemmWarpPolicy Kernel Layout Let Parallel Persistent
PersistentTileScheduler Pipelined Select Serial SharedBuffer StridedTensor Tensor WSID WSPipeline WSRole
WSSchedule WSScope WSSync abs access_ptr address_of alloc_barrier alloc_buffer alloc_cluster_barrier
alloc_descriptor alloc_fragment alloc_global alloc_local alloc_reducer alloc_shared alloc_smem alloc_tmem
alloc_var annotate_consumer_reg_alloc annotate_l2_hit_ratio annotate_layout annotate_min_blocks_per_sm
annotate_producer_reg_dealloc annotate_restrict_buffers annotate_safe_value annotate_ws_schedule any_sync
assume async_copy atomic_add atomic_addx2 atomic_addx4 atomic_load atomic_max atomic_min atomic_or
atomic_store attr barrier_arrive barrier_wait bfloat16 bitwise_and bitwise_or bitwise_xor
block_rank_in_cluster bool call_extern call_intrin cast ceil ceildiv clamp clc_get_first_ctaid_x
clc_is_canceled clc_try_cancel_multicast clear cluster_dims comm_reducer const contiguous copy cos
cp_async_barrier_noinc cummax cumsum device_assert disable_warp_group_reg_alloc dp4a dtype dynamic empty erf
evaluate exp exp10 exp2 fence_proxy_async fill finalize_reducer float float16 float16x2 float32
float4_e2m1_unpacked float4_e2m1fn float8_e4m3 float8_e4m3fn float8_e5m2 floor floordiv floormod gemm
gemm_blockscaled gemm_sp get_block_binding get_lane_idx get_thread_binding get_warp_group_idx get_warp_idx
half if_then_else im2col import_source index_to_coordinates infinity inline int int16 int32 int32x4 int4 int64
int8 isinf isnan let log log10 log1p log2 loop_break macro make_tensor max max_value mbarrier_arrive
mbarrier_arrive_expect_tx mbarrier_wait_parity min min_value mma_gemm_blockscaled no_set_max_nreg parallel pow
prim_func print ptr ptx_commit_group ptx_cp_async ptx_wait_group reduce_absmax reduce_abssum reduce_bitand
reduce_bitor reduce_bitxor reduce_max reduce_min reduce_sum reinterpret reshape rng_init rng_rand round rsqrt
serial set_max_nreg shfl_down shfl_up shfl_xor shift_left shift_right sigmoid sin sqrt symbolic sync_grid
sync_threads sync_warp tan tanh tcgen05_cp_warpx4 tcgen05_gemm tcgen05_gemm_blockscaled tcgen05_mma_arrive
tcgen05_sf_warp_transpose tfloat32 thread_binding tma_copy to transpose trunc truncdiv truncmod tvm_access_ptr
tvm_thread_allreduce tvm_warp_shuffle uint uint16 uint32 uint64 uint8 unroll use_swizzle vectorized view
wait_wgmma warp_reduce_max warp_reduce_min warp_reduce_sum wgmma_gemm ws ws_op
""".split())
