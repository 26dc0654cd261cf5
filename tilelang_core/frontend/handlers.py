"""The handler of every builtin call in a kernel body (HANDLERS), and the builtins whose handlers read the
call themselves instead of bound arguments (NO_BIND).
"""
from __future__ import annotations

from .alloc_calls import (OTHER_ALLOCS, h_alloc, h_alloc_other, h_alloc_var, h_empty, h_make_tensor, h_opaque,
                          h_reshape, h_tensor)
from .allreduce import ALLREDUCE_HANDLERS
from .atomics import ATOMIC_HANDLERS
from .externs import EXTERN_HANDLERS
from .func_attrs import FUNC_ATTR_HANDLERS
from .im2col import IM2COL_HANDLERS
from .intrinsics import INTRINSIC_HANDLERS
from .hints import HINT_HANDLERS
from .kernel_errors import KernelError
from .reducers import REDUCER_HANDLERS
from .region_predicates import REGION_PREDICATE_HANDLERS
from .rng import RNG_HANDLERS
from .source_kernel import h_cuda_source_kernel
from .scalar_calls import (MATH_INTRINSICS, h_align_up, h_Cast, h_cast, h_const_value, h_extract_lane,
                           h_if_then_else, h_let, h_math, h_typed_const)
from .threadops import THREAD_HANDLERS
from .tileops import (REDUCE_OPS, h_annotate_layout, h_async_copy, h_atomic_add, h_copy, h_cumsum, h_fill, h_gemm,
                      h_gemm_sp, h_reduce, h_use_swizzle)
from .warp_vote import WARP_VOTE_HANDLERS


def h_loop_call(p, b, node, short):
    """Loop builtins outside a `for` header."""
    raise KernelError("bad-arguments", f"T.{short}(...) is a loop range; use it as `for i in T.{short}(...):`", node)


def h_kernel_call(p, b, node, short):
    """T.Kernel outside a `with` header."""
    raise KernelError("invalid-kernel", "T.Kernel(...) opens the launch; write `with T.Kernel(grid..., threads=128) "
                      "as (bx, by):`", node)


HANDLERS = {
    "alloc_shared": h_alloc, "alloc_fragment": h_alloc, "alloc_local": h_alloc, "alloc_var": h_alloc_var,
    "copy": h_copy, "async_copy": h_async_copy, "gemm": h_gemm, "gemm_v1": h_gemm, "gemm_v2": h_gemm, "wgmma_gemm": h_gemm, "gemm_sp": h_gemm_sp,
    "clear": h_fill, "fill": h_fill,
    "cumsum": h_cumsum, "cummax": h_cumsum, "atomic_add": h_atomic_add, "annotate_layout": h_annotate_layout,
    "use_swizzle": h_use_swizzle, "if_then_else": h_if_then_else, "Select": h_if_then_else, "align_up": h_align_up,
    "extract_lane": h_extract_lane, "cast": h_cast,
    "infinity": h_typed_const, "max_value": h_typed_const, "min_value": h_typed_const,
    **{name: h_alloc_other for name in OTHER_ALLOCS},
    **{name: h_opaque for name in ("alloc_descriptor", "alloc_smem")},
    "let": h_let, "const": h_const_value, "dynamic": h_const_value, "symbolic": h_const_value, "Cast": h_Cast,
    "make_tensor": h_make_tensor, "reshape": h_reshape, "view": h_reshape, "Tensor": h_tensor, "Buffer": h_tensor,
    "StridedTensor": h_tensor, "empty": h_empty,
    "Pipelined": h_loop_call, "Parallel": h_loop_call, "serial": h_loop_call, "unroll": h_loop_call,
    "vectorized": h_loop_call, "grid": h_loop_call, "Kernel": h_kernel_call,
    "CUDASourceCodeKernel": h_cuda_source_kernel,
    **{name: h_reduce for name in REDUCE_OPS}, **{name: h_math for name in MATH_INTRINSICS}, **THREAD_HANDLERS,
    **INTRINSIC_HANDLERS, **EXTERN_HANDLERS, **IM2COL_HANDLERS, **ALLREDUCE_HANDLERS, **RNG_HANDLERS,
    **REDUCER_HANDLERS, **HINT_HANDLERS, **FUNC_ATTR_HANDLERS, **REGION_PREDICATE_HANDLERS, **ATOMIC_HANDLERS,
    **WARP_VOTE_HANDLERS,
}
NO_BIND = set(THREAD_HANDLERS) | set(INTRINSIC_HANDLERS) | set(EXTERN_HANDLERS) | set(IM2COL_HANDLERS) | \
    set(ALLREDUCE_HANDLERS) | set(RNG_HANDLERS) | set(MATH_INTRINSICS) | set(OTHER_ALLOCS) | \
    set(REGION_PREDICATE_HANDLERS) | \
    {"CUDASourceCodeKernel", "let", "const", "dynamic", "symbolic", "Cast", "make_tensor", "empty", "Tensor", "Buffer", "StridedTensor", "reshape",
     "view", "alloc_descriptor", "alloc_smem"}
