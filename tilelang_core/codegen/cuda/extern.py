"""CUDA lowering of user CUDA code: `T.import_source` puts the code into the generated file (before the
kernels), `T.call_extern` becomes a call of the named function, `T.access_ptr` the address of an element and
`T.dp4a` a call of `__dp4a` on the four int8 values at two addresses, `T.device_assert` a check that prints the
line and traps, `T.ptx_mma` a warp-wide mma.sync and `T.mma_fragment_load` an ldmatrix (mma.py), an iket marker a trace record (iket.py); `T.tvm_warp_shuffle` is `__shfl_sync`, TVM's
thread all-reduce over threadIdx.x lanes `tl::lanes_allreduce`."""
from __future__ import annotations

import json
import math

from ...ir import nodes as N
from ...ir.arith import as_int
from .common import LoweringError
from .expr import dtype_of
from .iket import emit_event
from .mma import emit_fragment_load, emit_mma


DP4A = r"""
namespace tl {
__device__ __forceinline__ void dp4a(const signed char* a, const signed char* b, int* c) {
  *c = __dp4a(*reinterpret_cast<const int*>(a), *reinterpret_cast<const int*>(b), *c);
}
}  // namespace tl
"""

DEVICE_ASSERT = r"""
namespace tl {
__device__ __forceinline__ void device_assert(bool ok, int line) {
  if (!ok) {
    printf("T.device_assert failed at line %d (block %d, thread %d)\n", line, (int)blockIdx.x, (int)threadIdx.x);
    __trap();
  }
}
}  // namespace tl
"""


class ExternOps:
    """User device code and calls of it, emitted through a KernelEmitter `em`."""

    def __init__(self, em):
        self.em = em
        self.iket_events: dict = {}  # the kernel's iket event table (iket.emit_event)

    def statement(self, s: N.Evaluate) -> bool:
        """`T.import_source(code)` (the code joins the kernel's device functions), `T.dp4a` and a `T.call_extern` statement;
        False for other statements."""
        call = s.value
        if isinstance(call, N.Call) and call.name == "call_extern":  # its value unused: called as a void function
            self.em.line(f"T.evaluate({self._call_extern(self.em.exprs, call, 'void')})")
            return True
        if isinstance(call, N.Call) and call.name == "ptx_mma":
            emit_mma(self.em, call)
            return True
        if isinstance(call, N.Call) and call.name == "mma_fragment_load":
            emit_fragment_load(self.em, call)
            return True
        if isinstance(call, N.Call) and call.name == "iket_event":
            emit_event(self.em, call, self.iket_events)
            return True
        if isinstance(call, N.Call) and call.name == "device_assert":  # the launch fails: an error on the host
            self.em.device_library.need(DEVICE_ASSERT)
            line = call.span.line if call.span is not None else 0
            cond = self.em.emit(call.args[0], "bool")
            self.em.line(f'T.evaluate(T.call_extern("void", "tl::device_assert", {cond}, {line}))')
            return True
        if isinstance(call, N.Call) and call.name == "dp4a":
            self.em.device_library.need(DP4A)
            ptrs = ", ".join(self.expr(self.em.exprs, ptr) for ptr in call.args)
            self.em.line(f'T.evaluate(T.call_extern("void", "tl::dp4a", {ptrs}))')
            return True
        if not isinstance(call, N.Call) or call.name != "import_source":
            return False
        code = _text_arg(call, "T.import_source needs its CUDA source text")
        self.em.device_library.need(code)
        return True

    def expr(self, exprs, e: N.Call) -> str | None:
        """`T.call_extern` and `T.access_ptr` as TVMScript; None for other calls (an ExprEmitter hook)."""
        if e.name == "access_ptr":
            load = e.args[0]
            if load.buffer.scope == "local.fragment":
                raise LoweringError(f"T.access_ptr of the fragment '{load.buffer.name}': a fragment is spread over "
                                    "the threads' registers and has no address; use T.alloc_local or shared memory",
                                    e.span)
            em = self.em
            idx = em.access(load.buffer, [em.idx(i) for i in load.indices], load)
            return f"{em.name(load.buffer)}.ptr_to([{', '.join(idx)}])"
        if e.name == "call_extern":
            return self._call_extern(exprs, e, e.dtype or "handle")
        if e.name == "thread_allreduce":
            return self._thread_allreduce(exprs, e)
        if e.name == "tvm_warp_shuffle" and len(e.args) == 5:  # (mask, value, lane, width, warp_size)
            mask, value, lane, width, _ = e.args
            t = dtype_of(value)
            return (f'T.call_pure_extern("{t}", "__shfl_sync", {exprs.emit(mask, "uint32")}, {exprs.emit(value)}, '
                    f'{exprs.emit(lane, "int32")}, {exprs.emit(width, "int32")})')
        return None

    def _thread_allreduce(self, exprs, e: N.Call) -> str:
        """A value combined over one threadIdx axis: warp shuffles when the axis is threadIdx.x within a warp
        (a power of two up to 32 lanes), else through shared memory, every thread reading its group's values."""
        value, op, axis = e.args
        em = self.em
        launch = em.plan.func.launch
        dims = [as_int(t) for t in (launch.threads if launch is not None else ())] or [em.threads]
        a = as_int(axis)
        if a is None or a >= len(dims) or None in dims:
            raise LoweringError("T.tvm_thread_allreduce reduces over a threadIdx axis of the launch with a "
                                "compile-time extent", e.span)
        em.intrinsic_ops.library()
        t, n = dtype_of(value), dims[a]
        if a == 0 and n <= 32 and not n & (n - 1):
            return f'T.call_pure_extern("{t}", "tl::lanes_allreduce", {exprs.emit(value)}, {as_int(op)}, {n})'
        if em.parallel_scope.in_parallel or em.thread_ops.role is not None:
            raise LoweringError("T.tvm_thread_allreduce over threadIdx.y / z or more than 32 lanes goes through "
                                "shared memory with a barrier, which every thread of the block must reach: call it "
                                "outside T.Parallel loops and thread roles", e.span)
        stride = math.prod(dims[:a])
        space = em.ops.workspace("allreduce", t, math.prod(dims))
        acc, k = em.fresh("allreduce_acc"), em.fresh("k")
        em.frame.allocs.append(f'{acc} = T.alloc_buffer((1,), "{t}", scope="local")')
        base = f"(tx - tx // {stride} % {n} * {stride})"  # the thread of the group whose index on the axis is 0
        em.sync()  # earlier readers of the workspace are done
        em.line(f"{space}[tx] = {exprs.emit(value)}")
        em.sync()
        em.line(f"{acc}[0] = {space}[{base}]")
        em.line(f"for {k} in T.serial(1, {n}):")
        with em.block():
            em.line(f'{acc}[0] = T.call_pure_extern("{t}", "tl::combine", {acc}[0], {space}[{base} + {k} * {stride}], '
                    f'{as_int(op)})')
        return f"{acc}[0]"

    @staticmethod
    def _call_extern(exprs, e: N.Call, dtype: str) -> str:
        texts = [json.dumps(_text_arg(e, "T.call_extern needs the name of the function it calls"))]
        texts += [exprs.emit(a) for a in e.args[1:]]
        return f'T.call_extern("{dtype}", {", ".join(texts)})'


def _text_arg(call: N.Call, what: str) -> str:
    """The string first argument of `call`; a LoweringError when it was not known as a string (only the checker,
    which does not run the user's file, leaves one unknown)."""
    arg = call.args[0]
    if isinstance(arg, N.Const) and isinstance(arg.value, str):
        return arg.value
    raise LoweringError(f"{what} as a Python string when the kernel is built; `{getattr(arg, 'name', arg)}` is not "
                        "one", call.span, code="bad-arguments")
