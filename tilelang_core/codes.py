"""The diagnostic code table: every stable code, its default severity, meaning, example and fix.

docs/diagnostics.md is generated from this table (`python -m tilelang_core.docgen`); a code that is
emitted anywhere must be listed here (a test enforces it).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from .severity import Severity

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO
TVM_INTERNAL_ERROR = "tvm.error.InternalError"  # what TileLang's C++ lowering checks raise (a RuntimeError)


@dataclass(frozen=True)
class CodeInfo:
    """One row of the code table."""

    code: str
    severity: Severity
    area: str
    meaning: str
    example: str
    fix: str
    # TileLang raises this Python error for it, when @T.prim_func runs (see CompileError); a dotted name stands for
    # the error of a package imported only when the user's program imports it (tvm's InternalError, see python_error)
    raises: type | str | None = None


_ROWS = [
    # --- frontend -------------------------------------------------------------------------
    CodeInfo("syntax-error", E, "frontend", "The file is not valid Python.",
             "for k in T.Pipelined(4, num_stages=3)\n    ...", "Fix the Python syntax at the reported position."),
    CodeInfo("undefined-name", E, "frontend", "A name used in a kernel is not defined anywhere visible.",
             "T.copy(A_shard, B_shared)", "Define the name, or fix the spelling (the message suggests close matches)."),
    CodeInfo("unsupported-syntax", E, "frontend", "A Python construct that cannot appear inside a TileLang kernel.",
             "try:\n    T.copy(A, S)\nexcept Exception: ...", "Use the TileLang construct the message names (e.g. T.if_then_else instead of a conditional expression)."),
    CodeInfo("unknown-builtin", E, "frontend", "`T.<name>` is not part of the TileLang language surface.",
             "T.alloc_shard((64, 64), T.float16)", "Use one of the builtins listed in docs/language.md."),
    CodeInfo("bad-arguments", E, "frontend", "A builtin got the wrong number, names or kinds of arguments.",
             "T.alloc_shared((64, 64))", "Pass the arguments the builtin's signature asks for."),
    CodeInfo("invalid-dtype", E, "frontend", "A dtype that TileLang does not know.",
             'T.alloc_shared((64, 64), "half16")', "Use a dtype such as T.float16 or \"float16\"."),
    CodeInfo("invalid-kernel", E, "frontend", "A @T.prim_func with no `T.Kernel` launch, or a malformed launch.",
             "with T.Kernel(1, 2, 3, 4) as (a, b, c, d): ...", "Give T.Kernel at most 3 grid dimensions."),
    CodeInfo("instance-error", W, "frontend", "A kernel factory could not be instantiated with the values found statically.",
             "kernel = matmul(M=N // 0)", "Fix the call, or add a `# tilelsp: matmul(M=..., ...)` comment."),
    CodeInfo("invalid-value", E, "frontend", "A size, extent, thread count, stage count or divisor that no kernel can have: zero or negative, not an integer, infinite or NaN, over int32 (a global tensor's dimension: over int64; a dimension past int32 makes that tensor's indices 64-bit), or a division by zero.",
             "T.alloc_shared((0, 32), T.float16)", "Fix the value (or the factory argument it comes from) so it is a positive integer below 2**31.", raises=ValueError),
    CodeInfo("reducer-epoch", E, "frontend", "A reducer epoch out of order or scope: T.reducer_update before "
             "T.reducer_init or outside T.Parallel, a second init before the finalize, a finalize in another loop "
             "than its init or none at all, or another store to or read of the reducer.",
             "T.reducer_init(acc)\nT.reducer_init(acc)", "Write init, updates (in T.Parallel) and T.finalize_reducer("
             "acc, dst) in one scope, and read `dst`, never the reducer."),
    CodeInfo("buffer-rank-mismatch", E, "frontend", "A buffer is indexed with the wrong number of indices.",
             "A_shared[i] = 0  # A_shared is 2-D", "Give one index per dimension."),
    CodeInfo("invalid-memory-order", E, "frontend", "An atomic's `memory_order` that does not exist, or that the "
             "operation cannot have (a load cannot release, a store cannot acquire).",
             'T.atomic_load(A[0], memory_order="release")',
             'Use one of the orders the message lists ("relaxed", "consume", "acquire", "release", "acq_rel", '
             '"seq_cst").', raises=ValueError),
    CodeInfo("fast-math-dtype", E, "frontend", "A fast-math intrinsic (T.__exp, T.__log, T.__sin, ...) given a value "
             "that is not float16, bfloat16, float32 or float64.", "T.__exp(i)  # i is an int32 loop variable",
             "Cast the value to a float type first: T.__exp(T.cast(i, T.float32)).", raises=TypeError),
    CodeInfo("out-idx-conflict", E, "frontend", "`out_idx` given to `tilelang.compile` / `tilelang.jit` for a "
             "kernel that returns the T.empty tensors it declares (those are already its outputs).",
             "B = T.empty([M], T.float32)\n...\nreturn B  # with tilelang.compile(kernel, out_idx=[-1])",
             "Drop out_idx, or declare the outputs as parameters instead of T.empty.", raises=ValueError),
    CodeInfo("slice-step", E, "frontend", "A buffer slice with a step (`A[0:10:2]`): tiles are contiguous.",
             "B[0:5] = A[0:10:2]", "Index the elements in a T.Parallel loop (`B[i] = A[i * 2]`).",
             raises=RuntimeError),
    CodeInfo("reshape-size-mismatch", E, "frontend", "T.reshape / T.view to a shape (and dtype) that does not hold "
             "the same number of bytes as the buffer.", "T.reshape(A, [32, 33])  # A has 1024 elements",
             "Give a shape whose element count times element size equals the buffer's.", raises=AssertionError),
    CodeInfo("reducer-dtype", E, "frontend", "A T.alloc_reducer whose op cannot combine its dtype: the bitwise ops "
             "(bitand, bitor, bitxor) need an integer dtype.", 'T.alloc_reducer((1,), T.float32, op="bitand")',
             "Allocate the reducer with an integer dtype, or use op='sum', 'max' or 'min'.", raises=AssertionError),
    CodeInfo("ieee-unsupported", E, "frontend", "A T.ieee_* operation no CUDA intrinsic provides: a rounding mode "
             "other than 'rn' on float16 / bfloat16, or T.ieee_frsqrt on float64.",
             'T.ieee_add(a_fp16, b_fp16, "rz")',
             "Use rounding mode 'rn' for half precision (or compute in float32 and cast); for a float64 reciprocal "
             "square root write 1.0 / T.ieee_fsqrt(x)."),
    # --- tile ops -------------------------------------------------------------------------
    CodeInfo("gemm-shape-mismatch", E, "gemm", "T.gemm operands disagree on M, N or K (after transposes).",
             "T.gemm(A_shared[64x32], B_shared[64x128], C)", "Make the K (or M/N) tile sizes agree."),
    CodeInfo("gemm-accumulator-shape", E, "gemm", "The T.gemm accumulator is not M x N.",
             "T.gemm(A[128x32], B[32x128], C_local[128x64])", "Allocate the accumulator as (block_M, block_N)."),
    CodeInfo("gemm-operand-scope", E, "gemm", "A T.gemm operand lives in a memory scope the instruction cannot read.",
             "T.gemm(A_global, B_shared, C_local)", "Copy A and B to shared memory (or a fragment) first; C must be a fragment."),
    CodeInfo("needs-sm100", E, "gemm", "A Blackwell-only construct (tensor memory, TCGEN05 MMA) in a kernel built "
             "for sm_80 … sm_90a.", "C_tmem = T.alloc_tmem((128, 128), T.float32)",
             "Accumulate in T.alloc_fragment with T.gemm on Hopper/Ampere, or build the kernel for sm_100."),
    CodeInfo("needs-sm90", E, "gemm", "T.wgmma_gemm in a kernel built for a GPU older than Hopper (sm_80 … sm_89).",
             "T.wgmma_gemm(A_shared, B_shared, C_local)  # built for sm_80",
             "Build the kernel for sm_90a, or call T.gemm, which lowers to mma.sync on older GPUs.",
             raises=TVM_INTERNAL_ERROR),
    CodeInfo("gemm-dtype-mismatch", E, "gemm", "T.gemm operand dtypes that no tensor-core instruction accepts.",
             "T.gemm(A_fp16, B_fp32, C)", "Give A and B the same dtype (fp8 families may mix e4m3/e5m2)."),
    CodeInfo("gemm-dynamic-shape", E, "gemm", "A T.gemm tile dimension is not a compile-time constant.",
             "A_shared = T.alloc_shared((m, 32), ...)  # m symbolic", "Use constant tile sizes for gemm operands."),
    CodeInfo("copy-extent-mismatch", E, "copy", "The two sides of T.copy cover different extents (no broadcast) "
             "and TileLang refuses the copy: its loop would follow a destination smaller than the source, or the "
             "sides' non-1 axes do not pair up.",
             "T.copy(A[by*128:by*128+128, k*64:k*64+64], A_shared)  # A_shared is 128x32",
             "Make the slice extents equal the tile's shape."),
    CodeInfo("copy-extent-differs", W, "copy", "The two sides of T.copy cover different extents that TileLang "
             "still copies: its loop runs over the extents of the side in the more local memory (fragment, then "
             "shared, then global; the source on a tie), each side indexed from its own start, so part of one side "
             "is left unwritten, or written or read beyond its slice.",
             "T.copy(A[:, 0:2], B[:, 0:3])  # both global: B[:, 2] is not written",
             "Make both sides cover the same extents."),
    CodeInfo("copy-shape-mismatch", E, "copy", "T.copy between two whole buffers whose shapes differ.",
             "T.copy(S_128x32, D_64x64)", "Copy a slice of matching shape, or fix one of the allocations."),
    CodeInfo("fp4-unpacking-copy", E, "copy", "A T.copy from packed float4_e2m1fn into a float4_e2m1_unpacked "
             "tile: a SIMT copy cannot unpack fp4 (TileLang leaves that to Blackwell's TMA).",
             "A_s = T.alloc_shared((32, 64), T.float4_e2m1_unpacked)\nT.copy(A_fp4[0, 0], A_s)",
             "Copy into a float4_e2m1fn tile, or convert each element with T.cast in a T.Parallel loop.",
             raises=RuntimeError),
    CodeInfo("async-copy-scope", E, "copy", "T.async_copy between memories cp.async cannot connect: it only copies "
             "global memory into shared memory.", "T.async_copy(S0_shared, S1_shared)",
             "Use T.copy for this copy (T.async_copy is for global -> shared tiles).", raises=TVM_INTERNAL_ERROR),
    CodeInfo("copy-dtype-mismatch", W, "copy", "T.copy converts between dtypes in a way that loses information.",
             "T.copy(C_local_fp32, C_int8)", "Cast explicitly inside a T.Parallel loop if the conversion is intended."),
    CodeInfo("copy-scope", E, "copy", "T.copy between scopes that cannot be connected (e.g. local to local across threads).",
             "T.copy(L_local, G)", "Use a fragment or shared buffer as the source."),
    CodeInfo("reduce-dim-out-of-range", E, "reduce", "The `dim` of a reduction is outside the input's rank.",
             "T.reduce_max(S_2d, m, dim=2)", "Use dim in [-rank, rank)."),
    CodeInfo("reduce-thread-width", E, "reduce", "A cross-thread T.reduce_* whose outputs each gather a number of "
             "threads that is not a power of two (TileLang's logical_width), or whose threads are not one "
             "contiguous, warp-aligned range: the warp-shuffle butterfly cannot combine them.", "with T.Kernel(1, threads=48):\n    ...\n    T.reduce_sum(x_frag_1x48, s, dim=1)",
             "Use a power-of-two thread count for the block, or lay the tile out so each output gathers 2, 4, ..., 32, "
             "64, ... adjacent threads starting at a multiple of 32."),
    CodeInfo("reduce-shape-mismatch", E, "reduce", "The reduction output does not have the input's shape without `dim`.",
             "T.reduce_sum(S[64x128], out[128], dim=1)", "Allocate the output as the input shape with `dim` removed (or kept as 1)."),
    CodeInfo("reduce-scope", E, "reduce", "A reduction between buffer scopes TileLang cannot reduce (e.g. from a global tensor).",
             "T.reduce_max(A_global, m_frag, dim=1)", "Copy the input into a fragment or shared tile first."),
    # --- resources ------------------------------------------------------------------------
    CodeInfo("shared-memory-exceeded", E, "resources", "Shared memory per block (stages included) exceeds the target's limit.",
             "3 stages of 256x128 + 128x256 fp16 = 384 KiB on sm_90a", "Reduce num_stages or the tile sizes."),
    CodeInfo("threads-exceeded", E, "resources", "More than 1024 threads per block.",
             "T.Kernel(..., threads=2048)", "Use at most 1024 threads per block."),
    CodeInfo("grid-exceeded", E, "resources", "A T.Kernel grid dimension exceeds CUDA's limit (x < 2^31, y and z <= 65535).",
             "T.Kernel(1, 131072, threads=128)", "Put the largest extent first (blockIdx.x), or loop inside the kernel."),
    CodeInfo("threads-not-warp-multiple", W, "resources", "Threads per block is not a multiple of the warp size (32).",
             "T.Kernel(..., threads=100)", "Round threads to a multiple of 32."),
    CodeInfo("register-pressure", W, "resources", "The fragments of one thread need more than 255 registers.",
             "C_local 256x256 fp32 with 128 threads = 512 registers/thread", "Use more threads or smaller fragments."),
    # --- indexing and structure -----------------------------------------------------------
    CodeInfo("index-out-of-bounds", E, "indexing", "A shared, fragment or local buffer index can leave the buffer.",
             "S[i + 1, j] with i in [0, 64) on a 64-row buffer", "Fix the index or the loop range."),
    CodeInfo("inconsistent-indexing", W, "indexing",
             "A block index, a serial loop's counter or a T.Parallel variable over one extent indexes one axis of a "
             "tensor or tile in some places and another axis, of another dimension as written, elsewhere: the tensor "
             "is indexed two ways (transposed), in bounds only while the two dimensions agree. Square tensors and "
             "tiles (both axes written alike) are never reported.",
             "A: T.Tensor((M, K), dtype)\n...\nT.copy(A[by * block_M, k * block_K], A_shared)\n"
             "T.copy(A_shared, A[k * block_K, by * block_M])  # by on the K axis",
             "Index the axis with the variable as the rest of the kernel does, or mark a deliberate transposed use "
             "with `# tilelsp: ignore[inconsistent-indexing]`."),
    CodeInfo("tile-index-mismatch", W, "indexing",
             "A block or loop variable counts tiles of one size (its extent is T.ceildiv(D, size) or D // size) but "
             "an offset scales it by another tile size, or every offset does while it counts in another: in bounds "
             "and correct only while the two sizes happen to be equal.",
             "with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):\n"
             "    ...\n    T.copy(C_local, C[bx * block_M, by * block_N])  # bx counts block_N tiles",
             "Scale the variable by the size it counts (or count with the size its offsets step by), or index with "
             "the variable that counts that size."),
    CodeInfo("local-indexed-by-parallel", E, "structure", "A T.alloc_local buffer is indexed by a T.Parallel variable.",
             "for i in T.Parallel(128): L[i] = 0", "Use T.alloc_fragment, or index with T.serial/T.unroll."),
    CodeInfo("nested-parallel", E, "structure", "T.Parallel inside T.Parallel.",
             "for i in T.Parallel(8):\n    for j in T.Parallel(8): ...", "Write one T.Parallel(8, 8) with two variables."),
    CodeInfo("tile-op-in-parallel", E, "structure", "A tile op (T.copy, T.gemm, ...) or T.Pipelined inside T.Parallel.",
             "for i in T.Parallel(8): T.copy(...)", "Move the tile op out of the T.Parallel loop."),
    CodeInfo("layout-shape-mismatch", E, "layout", "T.annotate_layout gives a layout whose shape differs from the buffer's.",
             "T.annotate_layout({S_128x32: T.Layout((64, 64), f)})", "Build the layout for the buffer's shape."),
    CodeInfo("layout-infer-conflict", E, "layout", "A T.Parallel loop whose `loop_layout` runs an iteration on "
             "threads that do not hold the fragment element it writes (the fragment's T.annotate_layout layout): with "
             "both thread maps fixed, no layout can satisfy them (TileLang: \"Layout infer conflict\").",
             "for i, j in T.Parallel(8, 4, loop_layout=loop_layout):  # frag annotated with another T.Fragment\n"
             "    frag[i, j] = 1.0",
             "Give the loop a layout whose threads for each iteration hold the element it writes, or drop "
             "loop_layout and let layout inference choose."),
    CodeInfo("layout-kind-mismatch", E, "layout", "A fragment is given a plain layout in T.annotate_layout; fragments need a T.Fragment.",
             "T.annotate_layout({C_local: make_swizzled_layout(C_local)})", "Build a T.Fragment (thread and index maps) for fragments."),
    CodeInfo("pipeline-config", E, "structure", "T.Pipelined order/stage lists do not match the loop body, or num_stages < 0.",
             "T.Pipelined(n, order=[0, 1], stage=[0])", "Give one order and one stage entry per statement of the body."),
    CodeInfo("fragment-parallel-dynamic", E, "structure",
             "A fragment is indexed by the variable of a T.Parallel loop whose range is only known at run time.",
             "for i in T.Parallel(n - bx * 64): F[i] = 0", "Loop over the full constant tile and guard with `if`."),
    CodeInfo("fragment-constant-index", E, "structure",
             "A fragment that nothing lays out (no tile op, T.annotate_layout or loop-variable index) is accessed at a "
             "constant non-zero index inside T.Parallel; it is replicated on every thread, so only element 0 exists.",
             "F = T.alloc_fragment((4,), T.float32)\nfor i in T.Parallel(4): F[1] = A[i]",
             "Index the fragment with the loop variable (F[i]), or keep a one-element fragment and use F[0]."),
    CodeInfo("fragment-index-mismatch", W, "structure",
             "A fragment is written and read with different index patterns in one T.Parallel loop (a cross-thread read).",
             "for i in T.Parallel(64): F[i] = F[(i + 1) % 64]", "Stage the values through a shared buffer, or read what the thread wrote."),
    # --- silent bugs: kernels that compile and run wrong (data-flow over one kernel instance) ---
    CodeInfo("uninitialized-read", E, "dataflow",
             "A shared, fragment or local buffer is read (or accumulated into) before anything wrote it: T.gemm into "
             "an accumulator no T.clear/T.fill/clear_accum set, T.reduce_*(clear=False) into an uninitialised "
             "buffer, or an element read of one.",
             "C_local = T.alloc_fragment((128, 128), T.float32)\nfor k in T.Pipelined(n):\n    ...\n    "
             "T.gemm(A_s, B_s, C_local)  # C_local never cleared",
             "Initialise the buffer first: T.clear(C_local) before the loop, clear_accum=True, or T.fill with the "
             "reduction's identity."),
    CodeInfo("output-not-covered", E, "dataflow",
             "Rows or columns of an output tensor that no block of the grid writes (a grid sized with `//`, block "
             "indices swapped between T.Kernel and the indexing, too small a grid). An error for out_idx outputs "
             "(fresh, uninitialised memory) whose axis the blocks walk; a warning for tensors passed in, and for "
             "outputs written at fixed positions only (TileLang compiles those).",
             "with T.Kernel(N // 64, M // 64) as (bx, by):  # M = 1000: rows 960..999 never written",
             "Size each grid axis with T.ceildiv(size, tile) and index each axis with its own block index."),
    CodeInfo("tile-outside-tensor", W, "dataflow",
             "Some blocks write a tile that starts past the end of the output tensor, so they write nothing "
             "(usually swapped block indices or an oversized grid).",
             "T.copy(C_local, C[bx * 64, by * 64])  # bx walks N, not M",
             "Make each grid extent T.ceildiv(size, tile) for the axis its block index walks."),
    CodeInfo("reduction-axis-step", E, "dataflow",
             "A loop feeding T.gemm (or T.reduce_* with clear=False) moves its K offset by a different amount per "
             "step than the tile holds along K, so part of K is skipped or summed twice.",
             "for k in T.Pipelined(T.ceildiv(K, 64)):\n    T.copy(A[by * 128, k * 64], A_s)  # A_s is 128x32",
             "Step the offset by the tile's K extent (k * block_K) and loop T.ceildiv(K, block_K) times."),
    CodeInfo("cross-block-race", W, "dataflow",
             "Several blocks write the same elements of a global tensor without an atomic: the write does not "
             "depend on a grid axis of extent > 1, or neighbouring blocks' tiles overlap.",
             "with T.Kernel(n, m, split_k) as (bx, by, bz):\n    T.copy(C_local, C[by * 64, bx * 64])",
             "Index the output with every block index, or accumulate with T.atomic_add into a zeroed tensor."),
    CodeInfo("cross-block-read", W, "concurrency",
             "A block reads elements of a global tensor that another block of the same launch writes (no T.sync_grid, "
             "no atomic protocol): the blocks run at once on the GPU, so the read races the write. The CPU backend "
             "runs the blocks in turn and hides it.",
             "with T.Kernel(n_blocks) as bx:\n    T.copy(part, partials[bx, :])\n    if bx == n_blocks - 1:\n"
             "        T.reduce_sum(partials, total, dim=0)  # the other blocks may not have written yet",
             "Read only what the block writes itself, or move the read into a second kernel launched after this one "
             "(T.sync_grid() between write and read in a cooperative kernel)."),
    CodeInfo("pipeline-prefetch-hazard", W, "concurrency",
             "A copy of a T.Pipelined loop (num_stages > 1) is issued num_stages - 1 iterations ahead, but it reads "
             "what the loop writes in an earlier iteration: global memory the loop body stores into, or an index kept "
             "in a variable the body updates. The prefetch reads the old value; the CPU backend runs the loop in order "
             "and hides it.",
             "for c in T.Pipelined(n, num_stages=2):\n    T.copy(S[c, :, :], S_shared)\n    ...\n"
             "    T.copy(S_new, S[c + 1, :, :])  # the copy of S[c + 1] was issued before this",
             "Carry the value from one iteration to the next in a fragment or shared tile instead of through global "
             "memory, index the copy with the loop variable itself, or use num_stages=1."),
    CodeInfo("role-race", W, "concurrency",
             "Two thread roles (`if tx < 128: ... else: ...`, `with T.ws(g):`) run at the same time on the GPU; one "
             "writes shared or global memory the other reads with no barrier (mbarrier or named barrier) ordering "
             "them, or one reads before it waits. The CPU backend runs the roles one after the other and hides it. "
             "An error when neither role synchronises at all and both touch the whole tile.",
             "if tx < 128:\n    T.copy(A[by * 64, k * 32], A_shared)\nelse:\n    T.gemm(A_shared, B_shared, C_local)",
             "Order the roles with an mbarrier (T.alloc_barrier; T.barrier_arrive after the write, T.barrier_wait "
             "before the read), or do the write before the `if` so the block barrier after it covers the read."),
    CodeInfo("async-copy-unwaited", W, "concurrency",
             "A shared tile is read while a T.ptx_cp_async copy into it may still be in flight: no T.ptx_wait_group "
             "(or mbarrier wait) between the copy and the read. The CPU backend completes each copy at once and hides it.",
             "T.ptx_cp_async(T.access_ptr(S[tx * 8], \"w\"), T.access_ptr(A[tx * 8], \"r\"), 8)\nT.ptx_commit_group()\n"
             "x = S[tx * 8]  # no T.ptx_wait_group(0) before",
             "Call T.ptx_commit_group() and T.ptx_wait_group(0) (then T.sync_threads() when other threads read what "
             "this thread copied) before reading the tile."),
    CodeInfo("output-read-before-write", W, "dataflow",
             "An out_idx output (allocated fresh and uninitialised by the JIT on each call) is read, or atomically "
             "accumulated into, before the kernel writes it.",
             "@tilelang.jit(out_idx=[-1])  # ... T.atomic_add(C[by * 64, bx * 64], C_local)",
             "Pass the tensor in (zeroed if it accumulates) and drop it from out_idx, or write it before reading."),
    CodeInfo("output-never-written", W, "dataflow", "An out_idx output that nothing in the kernel writes (the call returns uninitialised memory for it).",
             "@tilelang.jit(out_idx=[2])  # C is never the target of a copy or store",
             "Write the result into it, or drop it from out_idx."),
    CodeInfo("inplace-hazard", W, "dataflow",
             "A tensor is written at positions that follow a block index while blocks also read parts of it that "
             "other blocks write, so the result depends on the order blocks run in.",
             "T.copy(X[k * 64, by * 64], S)  ...  T.copy(D, X[bx * 64, by * 64])",
             "Write the result into a separate output tensor."),
    CodeInfo("index-overflow", E, "dataflow",
             "int32 index arithmetic (a scalar bound by assignment, an int32 local, a loop bound) exceeds "
             "2**31 - 1 for the instance's sizes and wraps around.",
             "offset = bx * (1024 * 1024 * 4)  # bx up to 1023",
             "Compute it in 64 bits (T.cast(x, T.int64) on the first operand), or index the buffer with it directly."),
    # --- deep checks (lowering in a worker) ------------------------------------------------
    CodeInfo("layout-inference-failed", E, "lowering", "No thread/element layout could be inferred for a fragment.",
             "a fragment only ever assigned element-wise with no anchor", "Anchor it with a T.copy/T.gemm, or annotate its layout."),
    CodeInfo("lowering-unsupported", E, "lowering", "A construct the lowering for this target does not support yet.",
             "T.cumsum on a fragment for CUDA", "See the message; the CPU backend may still run it."),
    CodeInfo("wgmma-unavailable", E, "lowering", "A T.wgmma_gemm that cannot lower to Hopper's wgmma: it has no "
             "mma.sync fallback (not an sm_90 target, or inputs, accumulator, operand scopes or M per warp group "
             "wgmma cannot take). Checked on the CPU backend too, as sm_90a would lower it.",
             "C_local = T.alloc_fragment((32, 64), T.float16)  # 128 threads: M=32 < 64 per warp group\n"
             "T.wgmma_gemm(A_shared, B_shared, C_local)",
             "Use T.gemm (it falls back to mma.sync), or give the gemm an accumulator with 64 rows of M per warp "
             "group of the block (float32, or float16 of fp16/fp8 inputs).", raises=TVM_INTERNAL_ERROR),
    CodeInfo("tma-atomic-unsupported", E, "lowering", "T.atomic_add(..., use_tma=True) (a TMA reduce-add of a "
             "shared tile into a global tensor) from a tile not in shared memory, on a dtype the bulk reduction has "
             "no form for, or for a target without TMA (before sm_90).",
             "T.atomic_add(out_int16, tile_int16, use_tma=True)",
             "Use float16, bfloat16, float32, int32, uint32 or uint64 and an sm_90 target, or drop use_tma to add "
             "element by element.", raises=TVM_INTERNAL_ERROR),
    CodeInfo("codegen-error", E, "lowering", "Code generation or nvcc failed for this kernel.",
             "(internal)", "Report it with the kernel; the message carries the compiler's output."),
    CodeInfo("shared-memory-report", I, "lowering", "The shared memory actually allocated after merging and multi-buffering.",
             "", "Informational."),
    # --- cli ------------------------------------------------------------------------------
    CodeInfo("file-unreadable", E, "cli", "`tilelsp check` could not read a file (permissions, not text, bad encoding).",
             "# a Latin-1 file without a `# -*- coding: latin-1 -*-` line", "Check the file's permissions and its encoding (UTF-8 or a PEP 263 cookie)."),
    CodeInfo("suppression-unknown-code", W, "cli", "A `# tilelsp: ignore[...]` comment names a code that does not exist.",
             "x = y  # tilelsp: ignore[gemm-shape-mismatc]", "Spell the code as docs/diagnostics.md lists it."),
    CodeInfo("internal-error", E, "cli", "The checker or the lowering itself failed on this construct (a tilelsp bug, not yours); an error, so nothing is reported as passing unchecked.",
             "(internal)", "Report it with the file; `tilelsp check --debug` prints the traceback."),
    # --- lsp ------------------------------------------------------------------------------
    CodeInfo("file-too-large", I, "lsp", "Files above 1,000,000 characters are skipped: the editor's check and "
             "`tilelsp check` note them, `ir`, `layout`, `verify`, `bench` and `autotune` stop (exit 2).",
             "a generated 10 MB kernel file", "Split the kernels into smaller files."),
    CodeInfo("verify-passed", I, "lsp", "Verify on device (from the editor) passed; the message gives the errors and time.",
             "", "Informational."),
    # --- verify ---------------------------------------------------------------------------
    CodeInfo("verify-mismatch", E, "verify", "The kernel's output differs from the reference beyond tolerance.",
             "", "Inspect the kernel; the message gives the max error and where."),
    CodeInfo("verify-failed", E, "verify", "Verification could not run (build failure, timeout, crash).",
             "", "See the message."),
    # --- sanitize (`tilelsp verify --sanitize`: the CPU backend's instrumented run) ------------------------------
    CodeInfo("sanitize-uninitialized-read", E, "sanitize",
             "At run time, a shared, fragment or local element was read before anything wrote it (the first block "
             "and thread that did it are named). On a GPU the read returns whatever the memory or registers held.",
             "acc = T.alloc_fragment((64, 64), T.float32)\nT.gemm(A_s, B_s, acc)  # no T.clear(acc) before",
             "Initialise the buffer first: T.clear / T.fill, clear_accum=True, a T.copy into it, or assignments "
             "before the loop that reads it."),
    CodeInfo("sanitize-unwritten-output", E, "sanitize",
             "At run time, elements of an out_idx output were written by no block (named as rows, columns or "
             "ranges); they keep whatever the fresh allocation held.",
             "with T.Kernel(N // 64, M // 64) as (bx, by):  # M = 1000 drops rows 960..999",
             "Size the grid with T.ceildiv(size, tile) so it covers the tensor, and index each axis with its own "
             "block index."),
    CodeInfo("sanitize-block-race", E, "sanitize",
             "At run time, two blocks of one launch wrote the same global element without an atomic (both blocks "
             "are named); on a GPU the result depends on which block runs last.",
             "for i, j in T.Parallel(64, 64):\n    C[i, j] = acc[i, j]  # the same tile from every block",
             "Index the output with the block indices so each block writes its own part, or accumulate with "
             "T.atomic_add into a zeroed tensor."),
    CodeInfo("sanitize-out-of-bounds", E, "sanitize",
             "At run time, an element access written in the kernel (`S[i, j]`) fell outside its shared, fragment or "
             "local buffer; the CPU backend skipped it, a GPU reads or overwrites the neighbouring memory or "
             "registers. Tile ops and global accesses are bounds-guarded by design (TileLang predicates every "
             "global access), so they are not reported.",
             "for i, j in T.Parallel(64, 64):\n    B_local[i, j] = S[i + 1, j]  # S is 64 x 64",
             "Guard the access (`if i + 1 < 64:`), size the buffer for the halo, or fix the index expression."),
    CodeInfo("sanitize-reduction-step", E, "sanitize",
             "At run time, a T.copy in a serial or pipelined loop that feeds T.gemm (or T.reduce_*(clear=False)) "
             "moved its offset along one axis between two iterations by a different amount than its tile holds, so "
             "part of that axis is skipped or summed twice (the block and the two offsets are named). Gathers "
             "(offsets read from a tensor) are not checked.",
             "for k in T.Pipelined(T.ceildiv(K, 64)):\n    T.copy(A[by * 64, k * 64], A_s)  # A_s is 64 x 32",
             "Step the offset by the tile's extent (k * block_K) and loop T.ceildiv(K, block_K) times."),
    CodeInfo("sanitize-inplace-hazard", E, "sanitize",
             "At run time, one block read a global element that another block of the same launch wrote without "
             "an atomic (or wrote one that another block had read): on a GPU the value read depends on the order "
             "the blocks run in. Both blocks and the writing lines are named.",
             "T.copy(X[by * 64, k * 32], X_s)  ...  T.copy(acc, X[by * 64, bx * 64])  # X = X @ W in place",
             "Write the result into a separate output tensor (or split the kernel in two launches)."),
    CodeInfo("sanitize-index-overflow", E, "sanitize",
             "At run time, int32 arithmetic in a scalar bound by assignment, a value stored into an int32 local, or "
             "a loop bound left the int32 range and wrapped (checked in 64 bits; the block, thread and the value "
             "are named). For large grids only the first and last block of each grid axis run (see docs/cli.md).",
             "bit = ((by * 32 + i) * K + bx * 256 + j) * 4  # K = 32768: up to 4,294,967,292",
             "Compute it in 64 bits (T.cast(x, T.int64) on the first operand), or index the buffer with it directly."),
    CodeInfo("metamorphic-config-mismatch", E, "sanitize",
             "With `verify --metamorphic`, the kernel gave a different result (beyond its dtype's tolerance) on the "
             "same inputs at another tile, stage or thread configuration (an autotune config, or one keyword "
             "varied); a correct tiled kernel computes the same function at every configuration. The parameter, "
             "the region of the output that differs and the statement writing it are named.",
             "T.copy(C_local, C[bx * block_M, by * block_N])  # grid (N / block_N, M / block_M): bx, by swapped",
             "Find the index or loop bound that uses the named parameter on the wrong axis, or a block index "
             "paired with the wrong tile size."),
    CodeInfo("metamorphic-config-coincidence", W, "sanitize",
             "With `verify --metamorphic`, changing one tile, stage or thread keyword makes the static checks reject "
             "this line (a reduction step, a copy extent, a coverage or bounds error): the instance is right only "
             "because two sizes happen to agree.",
             "T.copy(V[bz, by, k * block_M, 0], V_shared)  # V_shared is block_N rows; block_M == block_N == 64",
             "Use the size that belongs to this axis (here block_N)."),
    CodeInfo("metamorphic-row-leak", W, "sanitize",
             "With `verify --metamorphic`, changing only one block of rows of the inputs whose first axis spans the "
             "output's first dimension changed other rows of the output: a row of the result depends on other "
             "rows' inputs.",
             "scale[i] = T.rsqrt(sumsq[0] / N + eps)  # every row uses row 0's norm",
             "Index per-row values with the row's own index; check offsets and block indices on axis 0."),
    CodeInfo("sanitize-sampled", I, "sanitize",
             "The instance's tensors were too large to sanitize every block, so only the first and last block of "
             "each grid axis ran: per-block findings hold for those blocks, races and hazards only between them, "
             "and unwritten outputs are not checked.",
             "unpack_int4(32768, 32768)  # 131072 blocks, 1.5G tensor elements",
             "Informational; sanitize a smaller instance of the kernel to check the whole grid."),
]

CODES: dict[str, CodeInfo] = {row.code: row for row in _ROWS}


def python_error(codes) -> type | None:
    """The Python error TileLang raises for the first of `codes` the table gives one (None: none does)."""
    return next((resolve_error(CODES[c].raises) for c in codes if c in CODES and CODES[c].raises is not None), None)


def resolve_error(raises: type | str) -> type:
    """A code's Python error class: a tvm error named by its dotted name is that class where tvm is loaded (code that
    catches it has loaded it), else RuntimeError, which every tvm error is."""
    if not isinstance(raises, str):
        return raises
    module, _, name = raises.rpartition(".")
    loaded = sys.modules.get(module)
    return getattr(loaded, name) if loaded is not None else RuntimeError


def raised_at_definition(code: str) -> bool:
    """Whether TileLang raises the code's Python error when `@T.prim_func` runs (its parser: the frontend codes),
    rather than at the compile (its lowering)."""
    row = CODES.get(code)
    return row is not None and row.raises is not None and row.area == "frontend"


def default_severity(code: str) -> Severity:
    """The table's severity for a code (KeyError for codes not in the table)."""
    return CODES[code].severity
