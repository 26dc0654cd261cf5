"""Hover text of the TileLang builtins, keyed by qualified name; `catalog.py` attaches it to the entries.

Each text says what the construct does, its parameters, the constraints, a short example and the
mistakes `tilelsp` reports for it (by diagnostic code). Markdown; the first line is the summary.
"""
from __future__ import annotations

_KERNEL = {
    "T.prim_func": """Mark a function as a TileLang kernel (a TIR `PrimFunc`).

The body is not run as Python: it is parsed and compiled. Parameters are annotated with
`T.Tensor(shape, dtype)` (or `T.Tensor[shape, dtype]`, `T.Buffer`); the body opens exactly one
`with T.Kernel(...)` launch. Usually defined inside a `@tilelang.jit` factory that closes over the sizes.

- `func`: the kernel function (the decorator form passes it).
- `eager_jit`: internal switch used by the eager `@tilelang.jit` style.

```python
@T.prim_func
def main(A: T.Tensor((M, K), T.float16), C: T.Tensor((M, N), T.float16)):
    with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
        ...
```

Reported: `invalid-kernel` (no or several `T.Kernel` launches), `unsupported-syntax`, `undefined-name`.""",
    "T.macro": """A helper whose body is inlined into the kernel that calls it (no function call at run time).

Use it to share code between kernels or to name a step (`MMA0(...)`, `Softmax(...)`). Arguments may be
buffers, expressions or Python values; the body follows the same rules as a `@T.prim_func` body.

```python
@T.macro
def scale_rows(acc, s):
    for i, j in T.Parallel(64, 64):
        acc[i, j] *= s[i]
```""",
    "T.Kernel": """Open the launch of a kernel: a grid of 1 to 3 dimensions of thread blocks.

`with T.Kernel(gx, gy, threads=128) as (bx, by):` binds the block indices. Everything inside runs once
per block; tile ops (`T.copy`, `T.gemm`, ...) and `T.Parallel` loops are shared by the block's threads.

- `*blocks`: 1 to 3 grid extents (ints or expressions such as `T.ceildiv(N, block_N)`).
- `threads`: threads per block, an int or a tuple of up to 3 dims; **defaults to 128**.
- `prelude`: raw CUDA text inserted before the kernel.
- `cluster_dims`: thread-block cluster shape (sm_90 and newer).

Constraints: at most 1024 threads per block, ideally a multiple of 32; the shared memory of all
allocations inside (times the pipeline stages) must fit the target.

```python
with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
    ...
```

Reported: `threads-exceeded`, `threads-not-warp-multiple`, `shared-memory-exceeded` (on this line),
`invalid-kernel` (more than 3 grid dims, unpacking the wrong number of indices).""",
    "T.get_thread_binding": """The thread index (`threadIdx.x/y/z` for `dim` 0/1/2) inside a `T.Kernel`.

For thread-level code; most kernels never need it because `T.Parallel` and tile ops distribute work.""",
    "T.get_block_binding": """The block index (`blockIdx.x/y/z` for `dim` 0/1/2) inside a `T.Kernel`.

Usually unnecessary: `with T.Kernel(...) as (bx, by)` already names them.""",
    "T.sync_threads": """A block-wide barrier (`__syncthreads()`), or a named barrier with `barrier_id`/`arrive_count`.

Tile ops insert the barriers they need; write one by hand only around manual shared-memory code.""",
}

_TYPES = {
    "T.Tensor": """A global-memory tensor parameter of a kernel: `T.Tensor(shape, dtype)` or `T.Tensor[shape, dtype]`.

- `shape`: a tuple of ints, names the factory closes over, or `T.dynamic` dims.
- `dtype`: e.g. `T.float16` or `"float16"` (default `"float32"`).

```python
def main(A: T.Tensor((M, K), T.float16), B: T.Tensor[(K, N), T.float16]): ...
```

The subscript form avoids editor warnings about calls in annotations. At call time the JIT checks the
torch tensor's dtype, rank and shape against it.""",
    "T.Buffer": """A TIR buffer parameter (older spelling of `T.Tensor`, with TIR's full argument list).

`T.Buffer((M, K), "float16")` behaves like `T.Tensor` for kernel parameters; `strides`, `elem_offset`,
`align`, `offset_factor` and `axis_separators` are passed through to TIR.""",
    "T.SharedBuffer": """A shared-memory buffer type for `@T.macro` parameters: `A_s: T.SharedBuffer((64, 32), T.float16)`.

Documents (and lets the checker verify) what the macro expects to be passed.""",
    "T.FragmentBuffer": """A fragment buffer type for `@T.macro` parameters: `acc: T.FragmentBuffer((64, 64), T.float32)`.""",
    "T.LocalBuffer": """A thread-local buffer type for `@T.macro` parameters: `x: T.LocalBuffer((8,), T.float32)`.""",
    "T.StridedTensor": """A global tensor parameter with explicit strides: `T.StridedTensor((M, K), (ld, 1), T.float16)`.

Use it for views of larger tensors (a leading dimension larger than the row). The JIT checks the
strides of the torch tensor at call time.""",
    "T.dynamic": """A symbolic (runtime) dimension, for shapes only known when the kernel is called.

`M = T.dynamic("M")` then `A: T.Tensor((M, K), dtype)`; the value is bound from the tensor's shape at call
time. `T.dynamic("m, n")` returns a tuple. (`T.symbolic` is the deprecated spelling.)

Tile shapes used by `T.gemm` must stay constant (`gemm-dynamic-shape`); loops and global slices may
use symbolic extents.""",
    "T.dtype": """The dtype object for a name or a torch dtype: `T.dtype("float16")`, `T.dtype(torch.bfloat16)`.

It compares equal to its name; `.bits`, `.lanes` and `.as_torch()` give its width, vector lanes and
the torch dtype (factories use it to pick sizes per dtype).""",
    "T.const": """Eager style only: declare dimension names bound from the argument shapes.

```python
@tilelang.jit
def matmul(A, B, block_M: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
```""",
    "T.empty": """Eager style only: declare the output tensor that the JIT allocates and returns.

`C = T.empty((M, N), T.float16)` ... `return C`. With the lazy style use `out_idx` instead.""",
}

_MEMORY = {
    "T.alloc_shared": """Allocate a tile in shared memory, visible to all threads of the block.

- `shape`: the tile shape (constants, e.g. `(block_M, block_K)`).
- `dtype`: element type.
- `scope`: `"shared.dyn"` (default, dynamic shared memory) or `"shared"`.

Staging tiles for `T.gemm` operands and coalesced stores live here. A buffer copied inside a
`T.Pipelined(num_stages=n)` loop is multi-buffered: it costs n times its size.

```python
A_shared = T.alloc_shared((block_M, block_K), T.float16)  # 128*32*2 B = 8 KiB (x stages)
```

Reported: `shared-memory-exceeded` (total per block over the target's limit, e.g. 227 KiB on
sm_90a, 163 KiB on sm_80), `index-out-of-bounds`.""",
    "T.alloc_fragment": """Allocate a register tile distributed across the threads of the block.

The whole tile is addressed as if it were one array (`C_local[i, j]`); the compiler infers which
thread holds which element (a `Fragment` layout). The usual home of a `T.gemm` accumulator and of
softmax/reduction state.

```python
C_local = T.alloc_fragment((block_M, block_N), T.float32)
```

Reported: `register-pressure` (elements per thread over 255 registers), `index-out-of-bounds`,
`fragment-parallel-dynamic`, `fragment-index-mismatch`, `layout-inference-failed` (deep check: a
fragment with no op that fixes its layout).""",
    "T.alloc_local": """Allocate a thread-private array (registers or local memory); every thread has its own copy.

Index it with `T.serial`/`T.unroll`/`T.vectorized` variables or constants, never with a `T.Parallel`
variable (use `T.alloc_fragment` for tiles shared out over threads).

Reported: `local-indexed-by-parallel`, `index-out-of-bounds`.""",
    "T.alloc_var": """Allocate a single thread-private scalar: `acc = T.alloc_var(T.float32, init=0.0)`.

Read and write it as `acc` / `acc = acc + x` (or `acc[0]`).""",
    "T.alloc_global": """Allocate a global-memory workspace inside the kernel (not through torch's allocator).""",
    "T.alloc_barrier": """Allocate mbarriers for asynchronous copies (sm_90 and newer); `arrive_count` per barrier.""",
    "T.alloc_reducer": """Allocate a reducer buffer (`op` = "sum" | "max" | "min") combined across threads by
`T.finalize_reducer`.""",
    "T.view": """Reinterpret a buffer with another shape and/or dtype without copying.""",
    "T.reshape": """Reinterpret a buffer with another shape (same number of elements) without copying.""",
}

_LOOPS = {
    "T.Pipelined": """A sequential loop whose tile copies are software-pipelined with the compute.

`for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):` overlaps loading tile k+1.. with
computing tile k. Shared buffers written by copies in the body get `num_stages` copies.

- `start`, `stop`: the range (`T.Pipelined(n)` is `0..n`).
- `num_stages`: buffered stages (0 disables pipelining; 2-4 is typical).
- `order`, `stage`: manual schedule, one entry per statement of the body.
- `annotations`: extra loop annotations.

`sync=` and `group=` were removed in TileLang 0.1.15.

Reported: `pipeline-config` (order/stage lengths differ from the body, negative stages),
`shared-memory-exceeded` (stages multiply the shared tiles), `tile-op-in-parallel` (inside T.Parallel).""",
    "T.Parallel": """An elementwise loop nest whose iterations are spread over the block's threads (and vector lanes).

`for i, j in T.Parallel(block_M, block_N):` visits every (i, j) once, in no particular order.

- `*extents`: one extent per loop variable.
- `coalesced_width`: vector width for global accesses.
- `loop_layout`: a `T.Fragment` fixing the thread mapping.
- `prefer_async`: allow cp.async for copies expressed as loops.

Only scalar expressions and buffer stores belong inside. A directly nested `T.Parallel` (the whole
body of the outer one) fuses with it; anything else is an error.

Reported: `nested-parallel`, `tile-op-in-parallel` (T.copy/T.gemm/T.Pipelined inside),
`local-indexed-by-parallel`, `fragment-parallel-dynamic` (a fragment indexed under a run-time extent),
`fragment-index-mismatch` (a fragment read with another thread's index), `index-out-of-bounds`.""",
    "T.serial": """A plain sequential loop executed by every thread: `for k in T.serial(n):` or `T.serial(start, stop, step)`.

A negative `step` counts down. Python's `range(...)` inside a kernel means the same.""",
    "T.unroll": """A sequential loop that is fully unrolled (`explicit=True` unrolls in TileLang's own pass).""",
    "T.vectorized": """A sequential loop lowered to vector instructions; the extent should be 2, 4, 8 or 16 elements.""",
    "T.grid": """Several nested serial loops: `for i, j in T.grid(M, N):`.""",
    "T.Persistent": """A persistent-kernel loop: each block walks tiles of `domain` in waves of `wave_size`.""",
}

_TILE_OPS = {
    "T.copy": """Copy a tile between any two memory scopes (global, shared, fragment).

Each side is a whole buffer, a slice `A[r0:r1, c0:c1]`, or a head address `A[r, c]` that takes its
extent from the other side. Size-1 dimensions may be dropped (`Q[b, s0:s1, h, :]` into a 2-D tile).
Both sides must cover the same extents: **there is no broadcast**. A dtype conversion happens when the
two dtypes differ (fp32 accumulator to fp16 output is the common case).

- `src`, `dst`: the two sides.
- keyword-only: `coalesced_width`, `disable_tma`, `eviction_policy` ("evict_normal" | "evict_first" |
  "evict_last"), `prefer_instruction`, `annotations`, `loop_layout`.

```python
T.copy(A[by * block_M, k * block_K], A_shared)  # head address: extent = A_shared's shape
T.copy(C_local, C[by * block_M, bx * block_N])
```

Reported: `copy-shape-mismatch` (two whole buffers), `copy-extent-mismatch` (slice vs tile),
`copy-dtype-mismatch` (lossy conversion such as float to int8), `copy-scope`.""",
    "T.gemm": """Tile matrix multiply-accumulate: `C += op(A) @ op(B)` (or `C = ...` with `clear_accum=True`).

A and B are shared tiles or fragments; C is a fragment accumulator. The last two dims are the matrix.

- `transpose_A`, `transpose_B`: A is stored K x M / B is stored N x K.
- `policy`: how warps split the M x N tile (`T.GemmWarpPolicy.Square`, `FullRow`, `FullCol`).
- `clear_accum`: zero C first.
- `mbar`: an mbarrier for asynchronous (TCGEN05) MMA.

Constraints: M, N, K agree after transposes, C is M x N, tile dims are compile-time constants, A and B
have the same dtype (fp8 e4m3/e5m2 may mix). fp16/bf16 operands usually accumulate in fp32.

```python
T.gemm(A_shared, B_shared, C_local)                  # (M, K) @ (K, N)
T.gemm(Q_shared, K_shared, S, transpose_B=True)      # (M, D) @ (N, D)^T
```

Reported: `gemm-shape-mismatch`, `gemm-accumulator-shape`, `gemm-dtype-mismatch`, `gemm-operand-scope`,
`gemm-dynamic-shape`.""",
    "T.clear": """Set every element of a tile (shared, fragment or local buffer, or a region of one) to zero.

`T.clear(C_local)` before a K loop of `T.gemm` is the usual accumulator reset (or `clear_accum=True`).""",
    "T.fill": """Set every element of a tile to `value`: `T.fill(m, -T.infinity(T.float32))`.

Works on shared, fragment and local tiles and on regions of global tensors.""",
    "T.reduce_max": """Maximum along one dimension: input `[X, d, Y]` gives output `[X, Y]` (or `[X, 1, Y]`).

- `dim`: the reduced dimension (negative counts from the end).
- `clear`: start from the identity (`True`) or combine with the current `out` (`False`, the
  online-softmax idiom).
- `batch`, `nan_propagate`, `annotations`: tuning options.

```python
T.reduce_max(scores, m_new, dim=1, clear=False)
```

Reported: `reduce-dim-out-of-range`, `reduce-shape-mismatch`, `reduce-scope` (e.g. a global input).""",
    "T.reduce_min": """Minimum along one dimension; same rules as `T.reduce_max`.

Reported: `reduce-dim-out-of-range`, `reduce-shape-mismatch`, `reduce-scope` (e.g. a global input).""",
    "T.reduce_sum": """Sum along one dimension: input `[X, d, Y]` gives output `[X, Y]` (or `[X, 1, Y]`).

With `clear=False` the sum is added to the current contents of `out`.

Reported: `reduce-dim-out-of-range`, `reduce-shape-mismatch`, `reduce-scope` (e.g. a global input).""",
    "T.reduce_abssum": """Sum of absolute values along one dimension (always starts from zero).

Reported: `reduce-dim-out-of-range`, `reduce-shape-mismatch`, `reduce-scope` (e.g. a global input).""",
    "T.reduce_absmax": """Maximum absolute value along one dimension (e.g. for quantisation scales).

Reported: `reduce-dim-out-of-range`, `reduce-shape-mismatch`, `reduce-scope` (e.g. a global input).""",
    "T.cumsum": """Inclusive prefix sum of a tile along `dim` (in place when `dst` is None; `reverse` scans backwards).""",
    "T.atomic_add": """Atomic `dst += value`, for a scalar element or a whole tile region (vectorised when possible).

Used for split-K reductions into global memory: `T.atomic_add(C[by * bm, bx * bn], C_local)`.
`memory_order` is one of "relaxed", "acquire", "release", "acq_rel", "seq_cst".""",
    "T.atomic_max": """Atomic maximum into `dst` (scalar or tile region).""",
    "T.atomic_min": """Atomic minimum into `dst` (scalar or tile region).""",
}

_LAYOUT = {
    "T.annotate_layout": """Fix the layout of buffers before layout inference: `T.annotate_layout({buf: layout, ...})`.

Shared buffers take a `T.Layout` (e.g. `tilelang.layout.make_swizzled_layout(A_shared)` to avoid bank
conflicts); fragments need a `T.Fragment`. The layout's input shape must equal the buffer's shape
(real TileLang accepts a wrong one silently and fails deep in lowering).

Reported: `layout-shape-mismatch`.""",
    "T.Layout": """A layout: `T.Layout(shape, lambda i, j: (row, col))` maps each index of `shape` to a new position.""",
    "T.Fragment": """A fragment layout: which thread (and which register) holds each element of a register tile.

`T.Fragment(shape, forward_thread_fn=lambda i, j: ..., forward_index_fn=..., replicate=1)`.""",
    "T.use_swizzle": """Rasterise thread blocks in panels of `panel_size` (order "row", "column" or "mlx") for L2 reuse.

Placed inside `T.Kernel`; `enable=False` turns it off without editing the call.""",
    "tilelang.layout.make_swizzled_layout": """A bank-conflict-free swizzled layout for a shared tile, for `T.annotate_layout`.

```python
T.annotate_layout({A_shared: tilelang.layout.make_swizzled_layout(A_shared)})
```""",
    "tilelang.layout.make_full_bank_swizzled_layout": "A 128-byte (full bank) XOR swizzle for a shared tile.",
    "tilelang.layout.make_half_bank_swizzled_layout": "A 64-byte (half bank) XOR swizzle for a shared tile.",
    "tilelang.layout.make_quarter_bank_swizzled_layout": "A 32-byte (quarter bank) XOR swizzle for a shared tile.",
    "tilelang.layout.make_wgmma_swizzled_layout": "The swizzle WGMMA (sm_90) expects for a shared operand tile.",
    "tilelang.layout.make_tcgen05mma_swizzled_layout": "The swizzle TCGEN05 MMA (sm_100) expects for a shared "
                                                       "operand tile.",
    "tilelang.layout.make_volta_swizzled_layout": "The swizzle of sm_70 MMA operands (`is_a`: the A operand).",
    "tilelang.layout.make_linear_layout": "The identity (row-major, unswizzled) layout of a buffer or region.",
    "tilelang.layout.make_fully_replicated_layout_fragment": "A fragment layout in which every one of `threads` "
                                                             "threads holds the whole buffer.",
    "T.GemmWarpPolicy": """How `T.gemm` splits the M x N tile over the block's warps: `Square`, `FullRow` or `FullCol`.""",
    "T.GemmWarpPolicy.Square": """Warps tile M and N as evenly as possible (the default).""",
    "T.GemmWarpPolicy.FullRow": """Each warp owns whole rows of the M x N tile (attention: row statistics stay in one warp).""",
    "T.GemmWarpPolicy.FullCol": """Each warp owns whole columns of the M x N tile.""",
}

_MATH = {
    "T.ceildiv": """Integer ceiling division `(lhs + rhs - 1) // rhs`, e.g. the grid size `T.ceildiv(N, block_N)`.""",
    "T.max": """Elementwise maximum of two scalar expressions (`T.max(a, b)`); use `T.reduce_max` for tiles.""",
    "T.min": """Elementwise minimum of two scalar expressions; use `T.reduce_min` for tiles.""",
    "T.exp": """Natural exponential. `T.exp2(x * 1.44269504)` is the faster equivalent on GPUs.""",
    "T.exp2": """Base-2 exponential; flash attention folds `log2(e)` into its softmax scale to use it.""",
    "T.log": """Natural logarithm.""",
    "T.log2": """Base-2 logarithm.""",
    "T.sqrt": """Square root.""",
    "T.rsqrt": """Reciprocal square root `1 / sqrt(x)` (one instruction on GPUs); RMSNorm's core.""",
    "T.abs": """Absolute value.""",
    "T.if_then_else": """A select expression: `T.if_then_else(cond, t, f)` (both sides are evaluated).""",
    "T.cast": """Convert a scalar expression to `dtype`: `T.cast(q[i, j], T.float16)`.""",
    "T.infinity": """Positive infinity of `dtype`; `-T.infinity(T.float32)` initialises a running max.""",
    "T.max_value": """The largest finite value of `dtype`.""",
    "T.min_value": """The smallest (most negative) finite value of `dtype`.""",
    "T.clamp": """Clamp a scalar expression into `[min_val, max_val]`.""",
}

_MISC = {
    "T.print": """Device-side printf of a scalar, a buffer or a fragment, prefixed by block and thread indices.

`msg` is a label; for buffers only one thread (or the warp given by `warp_group_id`/`warp_id`) prints.""",
    "T.device_assert": """Trap on the device when `condition` is false (debug builds); `msg` is printed.""",
}

_JIT = {
    "tilelang.jit": """Compile a kernel factory on first call, cache it, and return a callable kernel.

Lazy style: the factory returns a `@T.prim_func`; `kernel = matmul(1024, 1024, 1024)` compiles it and
`c = kernel(a, b)` runs it on torch tensors. Eager style: the decorated function is the kernel itself
(`T.const`, `T.empty`, `return C`).

- `out_idx`: index (or list) of parameters that are outputs; they are allocated and returned.
- `target`: "auto", "cuda", "llvm", a dict like `{"kind": "cuda", "arch": "sm_90a"}`, ...
- `execution_backend`, `verbose`, `pass_configs`, `debug_root_path`, `compile_flags`: build options.

```python
@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32): ...
```

`tilelsp` instantiates factories from literal call sites (`matmul(1024, 1024, 1024)`), parameter
defaults or a `# tilelsp: matmul(M=4096, ...)` comment; `instance-error` when that fails.""",
    "tilelang.compile": """Compile a `PrimFunc` to a `JITKernel` (the non-decorator form of `tilelang.jit`).

`kernel = tilelang.compile(matmul(1024, 1024, 1024), out_idx=[-1], target="cuda")`.""",
    "tilelang.lower": """Run the compiler pipeline and code generation only, returning the artifact with `.kernel_source`.""",
}

_ADVANCED = {
    "T.tma_copy": "An explicit TMA bulk copy (sm_90+) completing on a user `barrier` (mbarrier); `T.copy` picks TMA "
                  "by itself where it can, so this is for hand-written warp-specialised pipelines.",
    "T.async_copy": "An explicit cp.async copy (sm_80+); completion is awaited by the following barrier.",
    "T.transpose": "Transpose a 2-D shared tile into another (`dst[j, i] = src[i, j]`).",
    "T.im2col": "Gather an image tile into a column matrix for convolution as a GEMM (NHWC input).",
    "T.wgmma_gemm": "A Hopper warpgroup MMA issued asynchronously; pair it with `T.wait_wgmma`. "
                    "`T.gemm` chooses WGMMA itself on sm_90a.",
    "T.tcgen05_gemm": "A Blackwell TCGEN05 MMA into tensor memory, completing on `mbar`.",
    "T.gemm_sp": "2:4 structured-sparse GEMM: `A_sparse` holds the kept values, `E` the metadata.",
    "T.cummax": "Inclusive running maximum of a tile along `dim` (in place when `dst` is None).",
    "T.reduce_bitand": "Bitwise AND along one dimension (integer tiles); same shape rules as `T.reduce_sum`.",
    "T.reduce_bitor": "Bitwise OR along one dimension (integer tiles); same shape rules as `T.reduce_sum`.",
    "T.reduce_bitxor": "Bitwise XOR along one dimension (integer tiles); same shape rules as `T.reduce_sum`.",
    "T.finalize_reducer": "Combine the per-thread copies of a `T.alloc_reducer` buffer (into `dst` when given).",
    "T.atomic_addx2": "Atomic add of two adjacent elements in one instruction (fp16/bf16 pairs).",
    "T.atomic_addx4": "Atomic add of four adjacent elements in one instruction (fp32).",
    "T.atomic_load": "Atomic load with a memory order (\"relaxed\", \"acquire\", \"seq_cst\", ...).",
    "T.atomic_store": "Atomic store with a memory order (\"relaxed\", \"release\", \"seq_cst\", ...).",
    "T.dp4a": "Dot product of four int8 pairs accumulated into int32 (`C += A . B`).",
    "T.alloc_tmem": "Allocate Blackwell tensor memory (TMEM) for TCGEN05 MMA accumulators.",
    "T.alloc_cluster_barrier": "Allocate mbarriers shared by a thread-block cluster (sm_90+).",
    "T.alloc_descriptor": "Allocate a WGMMA/TCGEN05 matrix descriptor (`kind` = \"wgmma\", \"tcgen05_smem\", ...).",
    "T.access_ptr": "A raw pointer to a buffer element, for extern calls and intrinsics (`access_type` \"r\", \"w\", \"rw\").",
    "T.reinterpret": "Reinterpret the bits of a scalar as another dtype of the same width.",
    "T.mbarrier_wait_parity": "Wait until the mbarrier's phase with the given parity completes.",
    "T.mbarrier_arrive": "Arrive on an mbarrier (optionally on another CTA of the cluster).",
    "T.barrier_arrive": "Arrive on a barrier allocated with `T.alloc_barrier`.",
    "T.barrier_wait": "Wait on a barrier allocated with `T.alloc_barrier` for the given phase parity.",
    "T.fence_proxy_async": "Order generic-proxy shared-memory writes before async-proxy (TMA/WGMMA) reads.",
    "T.wait_wgmma": "Wait until at most `id` WGMMA groups are still in flight.",
    "T.set_max_nreg": "Raise (`is_inc=1`) or lower the register budget of the current warpgroup (sm_90a).",
    "T.inc_max_nreg": "Raise the register budget of the current warpgroup to `reg_count` (setmaxnreg.inc, sm_90a).",
    "T.dec_max_nreg": "Lower the register budget of the current warpgroup to `reg_count` (setmaxnreg.dec, sm_90a).",
    "T.no_set_max_nreg": "Leave the warpgroups' register budgets alone (a hint; emits nothing).",
    "T.disable_warp_group_reg_alloc": "Same as `T.no_set_max_nreg()`: no register reallocation between warpgroups.",
    "T.mbarrier_expect_tx": "Add `tx` expected transaction bytes to an mbarrier's current phase (sm_90+).",
    "T.mbarrier_arrive_expect_tx": "Arrive on an mbarrier and add `tx` expected transaction bytes (sm_90+).",
    "T.thread_binding": "As a value (`tx = T.thread_binding(0, threads, thread=\"threadIdx.x\")`): the thread index "
                        "on that axis, like `T.get_thread_binding`.",
    "T.ws": "`with T.ws(g):` runs the body on warp group `g` (threads 128g..128g+127) only. Roles that hand data over "
            "through `T.alloc_barrier` mbarriers are warp-specialised: their tile ops run on the group's 128 threads.",
    **{f"T.ieee_{op}": f"IEEE-754 {what} with an explicit rounding mode: \"rn\" (nearest even), \"rz\" (toward "
                       f"zero), \"ru\" (up), \"rd\" (down); float32 (and float64)."
       for op, what in (("add", "x + y"), ("sub", "x - y"), ("mul", "x * y"), ("fmaf", "fused x * y + z"),
                        ("frcp", "1 / x"), ("fsqrt", "sqrt(x)"), ("fdiv", "x / y"))},
    "T.ieee_frsqrt": "IEEE-754 1 / sqrt(x), rounded to nearest (float32).",
    "T.sync_warp": "Synchronise the threads of a warp (`__syncwarp(mask)`).",
    "T.sync_grid": "Synchronise all blocks of a cooperative launch.",
    "T.get_lane_idx": "The lane index of the current thread within its warp.",
    "T.get_warp_idx": "The warp index of the current thread within the block.",
    "T.get_warp_group_idx": "The warpgroup index (4 warps by default) of the current thread.",
    "T.block_rank_in_cluster": "The rank of the current block within its thread-block cluster.",
    "T.ClusterKernel": "Like `T.Kernel`, launching thread-block clusters of shape `cluster_dims` (sm_90+).",
    "T.shfl_xor": "Warp shuffle: the value held by lane `lane ^ delta`.",
    "T.shfl_up": "Warp shuffle: the value held by lane `lane - delta`.",
    "T.shfl_down": "Warp shuffle: the value held by lane `lane + delta`.",
    "T.warp_reduce_sum": "Sum of a scalar over the 32 lanes of a warp, returned to every lane.",
    "T.warp_reduce_max": "Maximum of a scalar over the 32 lanes of a warp, returned to every lane.",
    "T.warp_reduce_min": "Minimum of a scalar over the 32 lanes of a warp, returned to every lane.",
    "T.tan": "Tangent.",
    "T.log10": "Base-10 logarithm.",
    "T.truncdiv": "Integer division rounding toward zero (C semantics).",
    "T.truncmod": "Remainder of `T.truncdiv` (sign follows the dividend).",
    "T.Select": "A select expression `condition ? true_value : false_value` (TIR `Select`).",
    "T.annotate_l2_hit_ratio": "Hint the L2 persistence hit ratio for global buffers: `{buffer: ratio}`.",
    "T.annotate_safe_value": "The value out-of-bounds loads of a global buffer read as: `{buffer: value}`.",
    "T.annotate_restrict_buffers": "Declare that the given buffers do not alias (`__restrict__`).",
    "T.annotate_min_blocks_per_sm": "Ask the compiler to fit at least `n` blocks per SM (`__launch_bounds__`).",
    "T.call_extern": "Call an external device function by name, returning `dtype`.",
    "T.assume": "Tell the arithmetic prover that `cond` holds (helps bounds and vectorisation).",
    "T.loop_break": "Break out of the innermost serial loop.",
    "T.import_source": "Include raw CUDA source text in the generated kernel file.",
}

DOCS: dict[str, str] = {**_KERNEL, **_TYPES, **_MEMORY, **_LOOPS, **_TILE_OPS, **_LAYOUT, **_MATH, **_MISC, **_JIT, **_ADVANCED}

_UNARY = {"tanh": "Hyperbolic tangent.", "floor": "Round down to an integer value.",
          "ceil": "Round up to an integer value.", "sigmoid": "Logistic sigmoid `1 / (1 + exp(-x))`.",
          "sin": "Sine.", "cos": "Cosine.", "log1p": "`log(1 + x)`, accurate for small x.",
          "exp10": "Base-10 exponential.", "round": "Round to the nearest integer value (ties to even).",
          "trunc": "Round toward zero.", "erf": "The error function.", "isnan": "True where x is NaN.",
          "isinf": "True where x is infinite.", "pow": "`x` raised to the power `y`.",
          "floordiv": "Floor division of integers.", "floormod": "Floor modulo of integers (non-negative for positive b)."}
DOCS.update({f"T.{k}": v for k, v in _UNARY.items()})

# Per-parameter text for signature help (the active parameter is shown with it).
_ANN = {"annotations": "extra annotations passed through to the lowering (dict)"}
_RED = {"buffer": "the input tile (fragment or shared)", "out": "the output tile: the input shape without `dim`, "
        "or with `dim` kept as 1", "dim": "the reduced dimension; negative counts from the end",
        "clear": "start from the identity (True) or combine with the current `out` (False)",
        "batch": "rows reduced per step (tuning)", "nan_propagate": "let NaN win the comparison", **_ANN}
_SHAPE_DTYPE = {"shape": "the tile shape: a tuple of compile-time ints", "dtype": "element dtype, e.g. T.float16"}
PARAM_DOCS: dict[str, dict[str, str]] = {
    "T.Kernel": {"blocks": "1 to 3 grid extents: the number of blocks along x, y, z",
                 "threads": "threads per block: an int or a tuple of up to 3 dims (default 128, at most 1024)",
                 "prelude": "raw CUDA source placed before the kernel",
                 "cluster_dims": "thread-block cluster shape (sm_90+)"},
    "T.Tensor": {"shape": "the tensor's shape: ints, factory values or T.dynamic dims",
                 "dtype": "element dtype (default float32)", "data": "an existing data pointer (rare)",
                 "scope": "memory scope (default global)"},
    "T.alloc_shared": {**_SHAPE_DTYPE, "scope": '"shared.dyn" (default) or "shared"'},
    "T.alloc_fragment": {**_SHAPE_DTYPE, "scope": 'always "local.fragment"'},
    "T.alloc_local": {**_SHAPE_DTYPE, "scope": 'always "local"'},
    "T.alloc_var": {"dtype": "the scalar's dtype", "args": "optionally the initial value, positionally",
                    "scope": 'always "local.var"', "init": "initial value"},
    "T.Pipelined": {"start": "the trip count (or the start when `stop` is given)", "stop": "end of the range",
                    "num_stages": "buffered stages; shared tiles copied in the body cost this many times their size",
                    "order": "manual emission order, one int per statement of the body",
                    "stage": "manual stage, one int per statement of the body", **_ANN},
    "T.Parallel": {"extents": "one extent per loop variable", "coalesced_width": "vector width for global accesses",
                   "loop_layout": "a T.Fragment fixing the thread mapping", "prefer_async": "allow cp.async", **_ANN},
    "T.serial": {"start": "the trip count (or the start when `stop` is given)", "stop": "end of the range",
                 "step": "the step (may be negative)", **_ANN},
    "T.copy": {"src": "source: a buffer, a slice A[a:b, c:d] or a head address A[i, j]",
               "dst": "destination: a buffer, a slice or a head address; extents must equal the source's",
               "coalesced_width": "vector width of the generated loop", "disable_tma": "never use TMA for this copy",
               "eviction_policy": '"evict_normal", "evict_first" or "evict_last"',
               "prefer_instruction": "force an instruction family (tuning)", **_ANN,
               "loop_layout": "a T.Fragment for the generated loop"},
    "T.gemm": {"A": "left operand (M x K, or K x M with transpose_A): shared tile or fragment",
               "B": "right operand (K x N, or N x K with transpose_B): shared tile or fragment",
               "C": "accumulator fragment, M x N", "transpose_A": "A is stored K x M",
               "transpose_B": "B is stored N x K (e.g. Q @ K^T)",
               "policy": "warp split: T.GemmWarpPolicy.Square, FullRow or FullCol",
               "clear_accum": "zero C before accumulating", "mbar": "mbarrier for asynchronous MMA", **_ANN},
    "T.clear": {"buffer": "the tile (or region) to zero", **_ANN},
    "T.fill": {"buffer": "the tile (or region) to fill", "value": "the value written to every element", **_ANN},
    **{f"T.reduce_{op}": _RED for op in ("max", "min", "absmax")},
    "T.reduce_sum": {k: v for k, v in _RED.items() if k != "nan_propagate"},
    "T.reduce_abssum": {k: v for k, v in _RED.items() if k not in ("nan_propagate", "clear")},
    "T.cumsum": {"src": "the input tile", "dst": "the output tile (None: in place)", "dim": "the scanned dimension",
                 "reverse": "scan from the end", **_ANN},
    "T.atomic_add": {"dst": "destination element or region (usually global)", "value": "value or tile to add",
                     "memory_order": '"relaxed", "acquire", "release", "acq_rel" or "seq_cst"',
                     "return_prev": "return the previous value (scalar form)", "use_tma": "use a TMA reduction",
                     **_ANN},
    "T.annotate_layout": {"layout_map": "{buffer: T.Layout | T.Fragment | make_swizzled_layout(buffer)}"},
    "T.use_swizzle": {"panel_size": "blocks per rasterisation panel", "order": '"row", "column" or "mlx"',
                      "enable": "False turns the swizzle off"},
    "T.dynamic": {"name": 'the dimension\'s name ("m", or "m, n" for several)', "dtype": "index dtype (int32)"},
    "T.if_then_else": {"cond": "the condition", "t": "value when true", "f": "value when false"},
    "T.cast": {"value": "the scalar expression", "dtype": "target dtype", "round": "rounding mode (fp8/fp4)",
               "sat": "saturate out-of-range values", "rbits": "random bits for stochastic rounding"},
    "tilelang.jit": {"func": "the factory (decorator form)", "out_idx": "output parameter index or list of indices",
                     "target": '"auto", "cuda", "llvm" or a dict like {"kind": "cuda", "arch": "sm_90a"}',
                     "execution_backend": "host wrapper backend", "verbose": "print compilation details",
                     "pass_configs": "{tilelang.PassConfigKey: value}", "debug_root_path": "where to dump sources",
                     "compile_flags": "extra nvcc flags"},
}
