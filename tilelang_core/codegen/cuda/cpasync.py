"""CUDA lowering of the hand-written asynchronous copies of warp-specialised kernels: `T.ptx_cp_async(dst, src, n)`
(one thread's cp.async of n elements, global to shared), `T.cp_async_barrier_noinc(bar)` (the mbarrier sees one
arrival once the thread's earlier cp.async copies have landed) and `T.ptx_commit_group` / `T.ptx_wait_group(n)`.

The copies use `tl::cp_async<BYTES>` of the device library every kernel includes (templates.py).
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.printer import expr_str
from .common import LoweringError, nbytes

STATEMENTS = ("ptx_cp_async", "cp_async_barrier_noinc", "ptx_commit_group", "ptx_wait_group")

DEVICE_LIBRARY = r"""
namespace tl {
__device__ __forceinline__ void mbar_cp_async_arrive_noinc(void* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}
}  // namespace tl
"""


def emit(em, call: N.Call) -> None:
    """Emit one of STATEMENTS through the KernelEmitter `em`."""
    if call.name == "ptx_cp_async":
        _cp_async(em, call)
    elif call.name == "cp_async_barrier_noinc":
        bar = call.args[0]
        em.device_library.need(DEVICE_LIBRARY)
        ptr = f"{em.name(bar.buffer)}.ptr_to([{em.idx(bar.indices[0])}])"
        em.line(f'T.cuda.func_call("tl::mbar_cp_async_arrive_noinc", {ptr}, source_code="")')
    elif call.name == "ptx_commit_group":
        em.line('T.cuda.func_call("tl::cp_async_commit", source_code="")')
    else:
        n = as_int(call.args[0]) if call.args else None
        if n is None or n < 0:
            raise LoweringError("T.ptx_wait_group needs a compile-time count of copy groups left in flight "
                                "(cp.async.wait_group takes an immediate)", call.span)
        em.line(f'T.cuda.func_call("tl::cp_async_wait<{n}>", source_code="")')


def _cp_async(em, call: N.Call) -> None:
    """cp.async of `n` elements of the destination's dtype (4, 8 or 16 bytes), zero-filled when the optional
    predicate is false."""
    if len(call.args) not in (3, 4) or not all(_is_ptr(a) for a in call.args[:2]):
        raise LoweringError("T.ptx_cp_async takes (T.access_ptr(shared element), T.access_ptr(global element), "
                            "num_elems[, predicate])", call.span)
    dst, src = (a.args[0].buffer for a in call.args[:2])
    if not dst.scope.startswith("shared") or src.scope != "global":
        raise LoweringError(f"T.ptx_cp_async copies global memory into shared memory (got {src.scope} '{src.name}' "
                            f"into {dst.scope} '{dst.name}')", call.span)
    n = as_int(call.args[2])
    size = n * nbytes(dst.dtype) if n is not None else None
    if size not in (4, 8, 16):
        raise LoweringError(f"T.ptx_cp_async copies 4, 8 or 16 bytes (cp.async); {expr_str(call.args[2])} elements of "
                            f"{dst.dtype} are not", call.span)
    pred = em.emit(call.args[3], "bool") if len(call.args) == 4 else "T.bool(True)"
    dptr, sptr = (em.emit(a) for a in call.args[:2])
    em.line(f'T.cuda.func_call("tl::cp_async<{size}>", {dptr}, {sptr}, {pred}, source_code="")')


def _is_ptr(e) -> bool:
    return isinstance(e, N.Call) and e.name == "access_ptr" and e.args and isinstance(e.args[0], N.Load)
