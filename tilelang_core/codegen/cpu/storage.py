"""Storage of the CPU backend: scratch allocations, each thread's copy of private buffers, buffer views."""
from __future__ import annotations

from ...ir import nodes as N
from ...language.dtypes import dtype_bits
from ..tvm_loader import load
from .expr import FP8, STORED_AS, LoweringError, cast, const, dtype_of, fp8_bits
from .packed import refuse_bulk_use

SCRATCH_SCOPE = "global"  # per-block scratch: stack or workspace, chosen by TVM by size


class StorageLowering:
    """Mixin of CpuLowering: where buffers live (uses its tirx, buffers, views, simt, tid, index, expr, fresh)."""

    def buffer(self, buf: N.Buffer, span=None):
        """The tirx buffer of an IR buffer in scope (a packed sub-byte tensor only through its elements)."""
        if buf in self.packed:
            raise refuse_bulk_use(buf, span)
        if buf not in self.buffers and buf.base is not None:
            return self.view(buf, span)
        if buf not in self.buffers:
            raise LoweringError(f"buffer '{buf.name}' is used outside its allocation", span or buf.span)
        return self.buffers[buf]

    def view(self, buf: N.Buffer, span=None):
        """A view (T.view / T.reshape / T.Tensor(..., A.data)): a tirx buffer over its base's storage."""
        base = self.buffer(buf.base, span)
        if self.simt is not None and self.simt.is_private(buf):
            raise LoweringError(f"'{buf.name}' views thread-private storage, which the CPU backend does not support",
                                span or buf.span)
        shape = [self.index(d) for d in buf.shape] or [const(1, "int32")]
        out = self._scratch_buffer(shape, buf, base.scope())
        self.buffers[buf] = out
        self._view_bases[out] = base
        return out

    def declare_views(self, base: N.Buffer) -> list:
        """DeclBuffer statements for the views over `base` (right after it is allocated or bound; a parameter's
        views are declared after the body, so the view buffers its body already made are the ones declared)."""
        views = (self.buffers[v] if v in self.buffers else self.view(v) for v in self.views.get(base, ()))
        return [self.tirx.DeclBuffer(view, data=self._view_bases[view].data) for view in views]

    def private(self, buf: N.Buffer, idx: list, span=None) -> list:
        """Indices into the current thread's copy of a private buffer (others unchanged)."""
        if self.simt is None or not self.simt.is_private(buf):
            return idx
        if self.tid is None:
            raise LoweringError(f"'{buf.name}' belongs to one thread but is used where the CPU backend runs the "
                                "block once", span)
        first = idx[0] + cast(self.tid * self.simt.private_rows(buf), dtype_of(idx[0]))
        return [first] + list(idx[1:])

    def _dtype(self, dtype: str, name: str, span) -> str:
        """`dtype` when TVM knows it (tfloat32 is stored as float32, float8_e4m3 as float8_e4m3fn: torch's one e4m3
        type, as on CUDA), else a LoweringError naming the buffer."""
        if dtype in STORED_AS:
            return STORED_AS[dtype]
        if dtype.startswith("float") and (dtype_bits(dtype) or 8) < 8:
            raise LoweringError(f"'{name}' has dtype {dtype}: sub-byte floats (stored packed, two fp4 values a byte "
                                "as torch.float4_e2m1fn_x2) are not supported by the CPU backend yet", span)
        try:
            load().tvm.DataType(dtype)
        except Exception:  # tvm raises its own error types
            raise LoweringError(f"'{name}' has dtype {dtype!r}, which is not known for this kernel instance or "
                                "not supported by the CPU backend", span) from None
        return dtype

    def _scratch_buffer(self, shape: list, b: N.Buffer, scope: str, span=None):
        """The tirx buffer of a scratch buffer or view; fp8 elements are stored as their uint8 bits."""
        if b.dtype not in FP8:
            return self.tirx.decl_buffer(shape, self._dtype(b.dtype, b.name, span or b.span), b.name, scope=scope)
        buf = self.tirx.decl_buffer(shape, "uint8", b.name, scope=scope)
        self.fp8_elements[buf] = (buf, b.dtype)
        return buf

    def _initial(self, b: N.Buffer, init):
        """The stored value of an allocation's initialiser (0 without one; fp8 as its bits)."""
        value = cast(self.expr(init), b.dtype) if init is not None else const(0, b.dtype)
        return fp8_bits(value, b.dtype) if b.dtype in FP8 else value

    def _s_Allocate(self, s):
        b = s.buffer
        shape = [self.index(d) for d in b.shape] or [const(1, "int32")]
        private = self.simt is not None and self.simt.is_private(b)
        if private:  # one copy per thread, stacked along the first axis
            shape[0] = shape[0] * self.simt.total
        buf = self._scratch_buffer(shape, b, SCRATCH_SCOPE, s.span)
        self.buffers[b] = buf
        out = [self.tirx.AllocBuffer(buf)] + self.declare_views(b)
        if b.scope == "shared.barrier":  # arrive counts: state only where roles wait on each other (cpu/mbarrier.py)
            return out + (self.simt.barriers.allocate(s) if self.simt is not None and self.simt.barriers else [])
        if s.init is None and b.scope != "local.var":
            return out
        # a T.alloc_var without init= starts at 0: LLVM deletes what reads an undefined scalar (a `while` summing
        # into one stored nothing), where the GPU's register reads as the zero TileLang's tests expect
        if not private:
            out.append(self.tirx.BufferStore(buf, self._initial(b, s.init), [const(0, "int32")] * len(shape)))
            return out
        saved = self.tid
        self.tid = self.fresh("t")
        try:
            rows = self.simt.private_rows(b)
            init = self.tirx.BufferStore(buf, self._initial(b, s.init),
                                         [self.tid * rows] + [const(0, "int32")] * (len(shape) - 1))
            out.append(self.tirx.For(self.tid, const(0, "int32"), self.simt.total, self.tirx.ForKind.SERIAL, init))
        finally:
            self.tid = saved
        return out
