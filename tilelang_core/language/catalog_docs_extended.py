"""Hover text of the builtins beyond the core tile program: layouts, scalar math, debugging, the JIT
entry points and the advanced (hardware-level) constructs; `catalog_docs.py` merges it into `DOCS`.
"""
from __future__ import annotations

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
    "T.cast": """Convert a scalar expression to `dtype`: `T.cast(q[i, j], T.float16)`. In a kernel only the default
rounding is supported (`round=""` or `"rn"` between floats); `round` must be one of "", "rn", "rz", "ru", "rd", "rs"
and `rbits` goes with "rs" only. On the host, `T.cast(number, dtype, round=...)` returns the rounded number.""",
    "T.infinity": """Positive infinity of `dtype`; `-T.infinity(T.float32)` initialises a running max.""",
    "T.max_value": """The largest finite value of `dtype`.""",
    "T.min_value": """The smallest (most negative) finite value of `dtype`.""",
    "T.clamp": """Clamp a scalar expression into `[min_val, max_val]`.""",
}

_MISC = {
    "T.print": """Device-side printf of a scalar, a buffer or a fragment, prefixed by block and thread indices.

`msg` is a label; for buffers only one thread (or the warp given by `warp_group_id`/`warp_id`) prints.
The CPU backend prints with printf from the kernel: `msg='...' dtype=... value=...` per value, a buffer element by
element with its index; a print outside the threads' code of a block runs once per block.""",
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
    "T.async_copy": "An explicit cp.async copy (sm_80+); here it is lowered as `T.copy`, complete when the statement ends.",
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
    "T.finalize_reducer": """Combine the per-thread copies of a `T.alloc_reducer` buffer (into `dst` when given).

`batch` (tuning) must be at least 1 and divide the reducer's element count.""",
    "T.atomic_addx2": "Atomic add of two adjacent elements in one instruction (fp16/bf16 pairs).",
    "T.atomic_addx4": "Atomic add of four adjacent elements in one instruction (fp32).",
    "T.atomic_load": "Atomic load with a memory order (\"relaxed\", \"acquire\", \"seq_cst\", ...).",
    "T.atomic_store": "Atomic store with a memory order (\"relaxed\", \"release\", \"seq_cst\", ...).",
    "T.extract_lane": "One lane of a vector value (`T.extract_lane(v, 0)` of a bfloat16x2 is its first bfloat16); "
                      "`lane` a compile-time integer below the lane count. Kernels have no vector-typed values "
                      "yet: in a kernel a scalar `value` is a ValueError (as in TileLang) and a vector one is "
                      "refused; on the host a `value` that is no expression is a TypeError and a negative lane an "
                      "IndexError.",
    "T.dp4a": "Dot product of four int8 pairs accumulated into int32 (`C += A . B`): the four values from each "
              "head element on, in memory order; CUDA's `__dp4a`, four int32 products on the CPU backend.",
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
    "T.get_warp_idx_sync": "The warp index of the current thread within the block (TileLang's warp-uniform "
                           "spelling; the same value as T.get_warp_idx).",
    "T.shuffle_elect": "True on the first thread of each group of `thread_extent` consecutive threads of the "
                       "block; with thread_extent=0, on the block's first thread only.",
    "T.get_warp_group_idx": "The warpgroup index (4 warps by default) of the current thread.",
    "T.block_rank_in_cluster": "The rank of the current block within its thread-block cluster (x fastest: "
                               "`bx % cx + (by % cy) * cx + (bz % cz) * cx * cy`; 0 without clusters). The CPU "
                               "backend computes it from the block index.",
    "T.ClusterKernel": "Like `T.Kernel`, launching thread-block clusters of shape `cluster_dims` (sm_90+, at most 8 "
                       "blocks per cluster; the GPU launch needs each grid extent a multiple of its cluster extent). CUDA: the kernel is "
                       "compiled with `__cluster_dims__`; the CPU backend runs the blocks one after another and "
                       "splits the launch at each cluster barrier.",
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
    "T.annotate_l2_hit_ratio": "Hint the L2 persistence hit ratio for global buffers: `{buffer: ratio}`, each ratio a "
                               "number from 0 to 1. On CUDA the launch sets the stream's L2 access policy window over "
                               "the first hinted tensor for that launch (hits persist at the ratio) and clears it "
                               "after; no effect on the CPU backend.",
    "T.annotate_safe_value": """The value reads outside a global tensor give instead of 0: `{tensor: value}`.

It holds for the whole kernel: element reads in `T.Parallel` and `T.copy` tiles that reach past the tensor
(TMA is not used for such a tensor's copies).""",
    "T.annotate_restrict_buffers": "Mark tensor parameters that may alias (overlapping views of one tensor): they "
                                   "lose `__restrict__` in the CUDA signature, and the CPU backend drops its no-alias "
                                   "assumption for the kernel.",
    "T.annotate_min_blocks_per_sm": "Ask the compiler to fit at least `n` blocks per SM (`__launch_bounds__`).",
    "T.annotate_pass_configs": "The kernel's own pass configs, `{PassConfigKey.TL_ENABLE_FAST_MATH: True}`, as if "
                               "given to `tilelang.compile(pass_configs=...)` (which overrides the same keys); "
                               "shown in `kernel.attrs[\"tilelang_pass_configs\"]`.",
    "T.annotate_compile_flags": "nvcc flags the kernel asks for, `[\"--use_fast_math\"]`; `--use_fast_math` builds "
                                "it as `tl.enable_fast_math` does, other flags are kept (`kernel.attrs"
                                "[\"tilelang_compile_flags\"]`) and not passed on.",
    "T.call_extern": "Call an external device function by name, returning `dtype`.",
    "T.assume": """Tell the compiler that `cond` holds (helps bounds and vectorisation).

A condition over the kernel's sizes and scalar arguments only is checked at each call: a call that breaks it
raises `RuntimeError("Assume: <cond> ...")`.""",
    "T.loop_break": "Break out of the innermost serial loop.",
    "T.import_source": "Include raw CUDA source text in the generated kernel file.",
}

_UNARY = {"tanh": "Hyperbolic tangent.", "floor": "Round down to an integer value.",
          "ceil": "Round up to an integer value.", "sigmoid": "Logistic sigmoid `1 / (1 + exp(-x))`.",
          "sin": "Sine.", "cos": "Cosine.", "log1p": "`log(1 + x)`, accurate for small x.",
          "exp10": "Base-10 exponential.", "round": "Round to the nearest integer value (ties to even).",
          "trunc": "Round toward zero.", "erf": "The error function.", "isnan": "True where x is NaN.",
          "isinf": "True where x is infinite.", "pow": "`x` raised to the power `y`.",
          "floordiv": "Floor division of integers.", "floormod": "Floor modulo of integers (non-negative for positive b).",
          "isfinite": "True where x is neither infinite nor NaN.", "sinh": "Hyperbolic sine.",
          "cosh": "Hyperbolic cosine.", "asin": "Arc sine.", "acos": "Arc cosine.", "atan": "Arc tangent.",
          "nearbyint": "Round to the nearest integer value in the current rounding mode (ties to even).",
          "fmod": "Floating-point remainder of x / y (the sign of x).", "atan2": "Arc tangent of x / y in the right quadrant (C's atan2(x, y)).",
          "hypot": "sqrt(x*x + y*y) without undue overflow.", "copysign": "x with the sign of y.",
          "nextafter": "The next representable value after x toward y.",
          **{f"__{n}": f"CUDA's fast-math __{n}f: faster, less accurate `T.{n}` on the GPU (the CPU backend computes "
             "it exactly)." for n in ("exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan")}}

EXTENDED_DOCS: dict[str, str] = {**_LAYOUT, **_MATH, **_MISC, **_JIT, **_ADVANCED,
                                  **{f"T.{k}": v for k, v in _UNARY.items()}}
