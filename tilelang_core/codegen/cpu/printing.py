"""`T.print` on the CPU backend: printf from the built kernel (a value from every thread that runs it; a whole
buffer from the one thread the call names, element by element in row-major order).

A float is formatted by `strfromd` into a small buffer and printed with `%s`: the call to printf is emitted with a
fixed signature, so it cannot pass doubles through varargs (x86-64 printf reads them only when %al says so).
"""
from __future__ import annotations

from ...ir import nodes as N
from .expr import const, dtype_of, is_float
from .storage import SCRATCH_SCOPE

PRINT_CALLS = ("print", "print_buffer")
_TEXT_BYTES = 48  # room for strfromd's "%g" of any double


def device_print(lw, call: N.Call) -> list:
    """The tirx statements for a "print" or "print_buffer" call (see the frontend's h_print)."""
    if call.name == "print_buffer":
        return [_print_buffer(lw, call)]
    *value, msg = call.args
    if not value:
        return [_printf(lw, f"msg='{_escape(msg.value)}'\n", [])]
    scalar = lw.expr(value[0])
    return _print(lw, f"msg='{_escape(msg.value)}' dtype={dtype_of(scalar)} value=", [], scalar)


def _print_buffer(lw, call: N.Call):
    head, msg, lane = call.args
    buf = head.buffer
    idx = tuple(N.Var(f"print_{buf.name}_{k}") for k in range(len(buf.shape)))
    loop = N.For(idx, tuple(N.Const(0) for _ in idx), tuple(buf.shape), "serial", N.SeqStmt(()))

    def element(_body):
        where = ", ".join("%d" for _ in idx)
        text = f"msg='{_escape(msg.value)}' buffer={buf.name} index=({where}) dtype={buf.dtype} value="
        stmts = _print(lw, text, [lw.vars[v] for v in idx], lw.expr(N.Load(buf, idx)))
        return stmts[0] if len(stmts) == 1 else lw.tirx.SeqStmt(stmts)

    stmt = lw.loops(loop, 0, body_fn=element)
    if lw.tid is None:
        return stmt
    return lw.tirx.IfThenElse(lw.tirx.EQ(lw.tid, const(int(lane.value), "int32")), stmt, None)


def _print(lw, prefix: str, args: list, value) -> list:
    """printf(prefix + value + newline, *args, value): ints as long long / unsigned long long, floats as text."""
    dtype = dtype_of(value)
    if not is_float(dtype):
        kind, fmt = ("uint64", "%llu") if dtype.startswith("uint") else ("int64", "%lld")
        return [_printf(lw, prefix + fmt + "\n", [*args, lw.tirx.Cast(kind, value)])]
    tirx = lw.tirx
    text = tirx.decl_buffer((_TEXT_BYTES,), "int8", lw.fresh("print_text").name, scope=SCRATCH_SCOPE)
    ptr = tirx.address_of(tirx.BufferLoad(text, [const(0, "int32")]))
    as_double = tirx.Cast("float64", value if dtype == "float64" else tirx.Cast("float32", value))
    fill = tirx.call_extern("int32", "strfromd", ptr, const(_TEXT_BYTES, "uint64"), lw.ir.StringImm("%g"), as_double)
    return [tirx.AllocBuffer(text), tirx.Evaluate(fill), _printf(lw, prefix + "%s\n", [*args, ptr])]


def _printf(lw, text: str, args: list):
    return lw.tirx.Evaluate(lw.tirx.call_extern("int32", "printf", lw.ir.StringImm(text), *args))


def _escape(text: str) -> str:
    """A message safe inside a printf format: '%' doubled."""
    return str(text).replace("%", "%%")
