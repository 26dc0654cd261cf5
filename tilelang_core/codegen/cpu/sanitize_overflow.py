"""The sanitizer's int32 overflow check (a mixin of SanitizingLowering): the values the real TileLang keeps in 32
bits — scalars bound by assignment, values stored into int32 locals, loop bounds — are evaluated a second time in
64 bits, and the first `+ - * <<` whose exact value leaves the int32 range is reported (innermost first).

The 64-bit copy is built from the tile IR, not from the int32 TIR (LLVM may assume signed int32 arithmetic does
not overflow, and would fold a comparison of the two away). Leaves (variables, loads, calls, casts) are lowered as
in the plain build and widened; a subtree that computes in 64 bits already is not checked; `//` and `%` are
followed only by a non-zero constant (the check must not divide by zero where the kernel does not).
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.printer import expr_str
from .expr import cast, const, dtype_of

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_SIGNED = {"int8": 8, "int16": 16, "int32": 32, "int": 32, "int64": 64}


class OverflowChecks:
    """Mixin: checks before int32 lets, int32 local stores and loop bounds."""

    def _s_LetStmt(self, s):
        out = super()._s_LetStmt(s)
        check = self._overflow_check([s.value], s.span, f"`{s.var.name}`") if _is_int32(s.var.dtype) else None
        out = out if isinstance(out, list) else [out]
        return out if check is None else [check] + out

    def _s_Store(self, s):
        check = None
        if s.buffer.scope in ("local.var", "local") and _is_int32(s.buffer.dtype):
            check = self._overflow_check([s.value], s.span, s.buffer.name)
        out = super()._s_Store(s)
        return out if check is None else [check, out]

    def _s_For(self, s):
        check = self._overflow_check(list(s.starts) + list(s.extents), s.span, "the loop bound")
        out = super()._s_For(s)
        out = out if isinstance(out, list) else [out]
        return out if check is None else [check] + out

    def _overflow_check(self, exprs, span, what: str):
        """One statement: for each int32 `+ - * <<` of `exprs` (innermost first), report the first whose 64-bit
        value leaves int32; None when nothing is computed in int32."""
        found: list = []
        for e in exprs:
            self._wide(e, found)
        if not found:
            return None
        tirx = self.tirx
        stmt = None
        for node, value in reversed(found):  # the innermost is tested first
            out = tirx.Or(tirx.LT(value, const(INT32_MIN, "int64")), tirx.GT(value, const(INT32_MAX, "int64")))
            site = self._site("sanitize-index-overflow", getattr(node, "span", None) or span, _SCALAR, True,
                              (expr_str(node), what))
            split = const(2**31, "int64")
            record = self._record(site, [cast(tirx.floordiv(value, split), "int32"),
                                         cast(tirx.floormod(value, split), "int32")])
            stmt = tirx.IfThenElse(out, record, stmt)
        return stmt

    def _wide(self, e, found: list):
        """(e in int64, the widest signed bits of its non-constant leaves: 0 when all are constants), or None
        when e is not signed integer arithmetic; appends the int32 `+ - * <<` nodes with their values to found."""
        tirx = self.tirx
        if isinstance(e, N.Const):
            if isinstance(e.value, bool) or not isinstance(e.value, int):
                return None
            return const(e.value, "int64"), 0
        ops = {"+": tirx.Add, "-": tirx.Sub, "*": tirx.Mul, "<<": tirx.shift_left}
        if isinstance(e, N.BinOp) and (e.op in ops or e.op in ("//", "%") and _nonzero_const(e.rhs)):
            a, b = self._wide(e.lhs, found), self._wide(e.rhs, found)
            if a is None or b is None:
                return None
            bits = max(a[1], b[1])
            if e.op in ops:
                value = ops[e.op](a[0], b[0])
                if 0 < bits <= 32:
                    found.append((e, value))
            else:
                value = (tirx.floordiv if e.op == "//" else tirx.floormod)(a[0], b[0])
            return value, bits
        leaf = self.expr(e)
        bits = _SIGNED.get(dtype_of(leaf))
        return None if bits is None else (cast(leaf, "int64"), bits)


_SCALAR = N.Buffer("scalar", (), "int32", "local.var")  # the site's buffer: overflow sites name an expression


def _is_int32(dtype: str) -> bool:
    return str(dtype) in ("int32", "int")


def _nonzero_const(e) -> bool:
    return isinstance(e, N.Const) and isinstance(e.value, int) and not isinstance(e.value, bool) and e.value != 0
