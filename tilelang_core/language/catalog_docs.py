"""Hover text of the TileLang builtins, keyed by qualified name; `catalog.py` attaches it to the entries.

Each text says what the construct does, its parameters, the constraints, a short example and the
mistakes `tilelsp` reports for it (by diagnostic code). Markdown; the first line is the summary.
The core tile program (kernel, types, memory, loops, tile ops) is here; the rest is in `catalog_docs_extended.py`.
"""
from __future__ import annotations

from .catalog_docs_extended import EXTENDED_DOCS
from .catalog_docs_intrinsics import INTRINSIC_DOCS

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
    "T.CUDASourceCodeKernel": """Launch a kernel written in CUDA: `source_code_or_path` is the source text or a
`.cu` file, `entry_name` its `extern "C" __global__` function. The entry takes the prim_func's tensors (pointers)
and scalars in order, then its symbolic dims (int). Called in the prim_func body, with no `with T.Kernel`; the CPU
backend cannot compile CUDA and refuses it.

```python
@T.prim_func
def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
    T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=CODE, entry_name="copy")
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

It compares equal to its name; `.bits`, `.lanes` and `.as_torch()` give the width of one lane, the vector
lanes and the torch dtype (factories use it to pick sizes per dtype). Once tvm is loaded, it and every
`T.<dtype>` is tvm's own `DataType` (`isinstance(T.float16, tvm.DataType)`, `.type_code`), as in TileLang;
before that it is a plain string, so that importing TileLang code costs no tvm.""",
    "T.let": """Bind a declared scalar variable to a value for the rest of the block (the statement form; a
`body` is not supported in a kernel).

```python
offset = T.int32()          # a dtype called with no value declares a variable
T.let(offset, ko * block_K)
T.copy(A[by * block_M, offset], A_shared)
```""",
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
    "T.alloc_reducer": """Allocate a reducer buffer (`op` = "sum" | "max" | "min" | "bitand" | "bitor" | "bitxor";
the bitwise ones need an integer dtype) combined across threads by `T.finalize_reducer`.

An epoch: `T.reducer_init(acc)`, `T.reducer_update(acc[i], v)` in `T.Parallel` loops, `T.finalize_reducer(acc,
dst)`. The in-place form (`T.clear(acc)`, `acc[i] += v`, `T.finalize_reducer(acc)`) still works.""",
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
- `loop_layout`: a `T.Fragment` fixing the thread mapping. One built on the host is checked against the
  `T.annotate_layout` fragments the loop writes: a thread may only write elements it holds
  (`layout-infer-conflict`); the lowering still picks its own mapping of the loop.
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

Each side is a whole buffer, a slice `A[r0:r1, c0:c1]` (or a name bound to one, `X = A_s[:64, :32]`, which is
then only a tile-op operand), or a head address `A[r, c]` that takes its extent from the other side. Size-1
dimensions may be dropped (`Q[b, s0:s1, h, :]` into a 2-D tile).
Two elements (`T.copy(A[i, j], B[i, j])`) make the element store `B[i, j] = A[i, j]`, which may sit in a
T.Parallel body. Both sides should cover the same extents: **there is no broadcast**. When they differ, the copy
loops over the extents of the side in the more local memory (fragment, shared, global; the source on a tie), each
side indexed from its own start, as TileLang does (`copy-extent-differs`); a destination smaller than the source
along the loop is refused (`copy-extent-mismatch`). A dtype conversion happens when the two dtypes differ (fp32
accumulator to fp16 output is the common case).

- `src`, `dst`: the two sides.
- keyword-only: `coalesced_width`, `disable_tma`, `eviction_policy` ("evict_normal" | "evict_first" |
  "evict_last"), `prefer_instruction`, `annotations`, `loop_layout`.

```python
T.copy(A[by * block_M, k * block_K], A_shared)  # head address: extent = A_shared's shape
T.copy(C_local, C[by * block_M, bx * block_N])
```

Reported: `copy-shape-mismatch` (two whole buffers), `copy-extent-mismatch` (slice vs tile),
`copy-extent-differs` (different extents TileLang still copies),
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

DOCS: dict[str, str] = {**_KERNEL, **_TYPES, **_MEMORY, **_LOOPS, **_TILE_OPS, **EXTENDED_DOCS, **INTRINSIC_DOCS}
