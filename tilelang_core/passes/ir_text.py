"""Readable TileLang-style text of tile-IR statements (the text of the parsed/legalized/pipelined stages)."""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.printer import expr_str, shape_str


def region_str(r: N.Region) -> str:
    """A region as `buf[a:b, c]` text."""
    if r.kind == "full" or not r.axes:
        return r.buffer.name
    parts = []
    for a in r.axes:
        start = expr_str(a.start)
        parts.append(f"{start}:{start} + {expr_str(a.extent)}" if a.sliced else start)
    return f"{r.buffer.name}[{', '.join(parts)}]"


def func_str(func: N.PrimFunc, notes: dict | None = None) -> str:
    """The kernel as TileLang-like text; `notes` maps id(stmt) -> a comment printed above it."""
    params = []
    for p in func.params:
        if isinstance(p, N.Buffer):
            params.append(f"{p.name}: T.Tensor(({', '.join(expr_str(d) for d in p.shape)}), {p.dtype!r})")
        else:
            params.append(f"{p.name}: T.{p.dtype}")
    lines = [f"# {func.instance}" if func.instance else "", "@T.prim_func", f"def {func.name}({', '.join(params)}):"]
    _stmt(func.body, 1, lines, notes or {})
    return "\n".join(x for x in lines if x != "" or False) + "\n"


def _stmt(s, depth: int, out: list, notes: dict) -> None:
    pad = "    " * depth
    if id(s) in notes:
        for ln in notes[id(s)].splitlines():
            out.append(pad + ln)
    if isinstance(s, N.SeqStmt):
        for x in s.stmts:
            _stmt(x, depth, out, notes)
    elif isinstance(s, N.Launch):
        grid = ", ".join(expr_str(g) for g in s.grid)
        names = ", ".join(v.name for v in s.block_vars)
        out.append(f"{pad}with T.Kernel({grid}, threads={', '.join(expr_str(t) for t in s.threads)}) as ({names}):")
        _stmt(s.body, depth + 1, out, notes)
    elif isinstance(s, N.Allocate):
        kind = {"shared.dyn": "alloc_shared", "shared": "alloc_shared", "local.fragment": "alloc_fragment",
                "local": "alloc_local", "local.var": "alloc_var"}.get(s.buffer.scope, "alloc")
        out.append(f"{pad}{s.buffer.name} = T.{kind}(({shape_str(s.buffer.shape).replace('x', ', ')}), "
                   f"{s.buffer.dtype!r})")
    elif isinstance(s, N.For):
        _for(s, depth, out, notes)
    elif isinstance(s, N.Store):
        out.append(f"{pad}{s.buffer.name}[{', '.join(expr_str(i) for i in s.indices)}] = {expr_str(s.value)}")
    elif isinstance(s, N.LetStmt):
        out.append(f"{pad}{s.var.name} = {expr_str(s.value)}")
    elif isinstance(s, N.If):
        out.append(f"{pad}if {expr_str(s.cond)}:")
        _stmt(s.then_body, depth + 1, out, notes)
        if s.else_body is not None:
            out.append(f"{pad}else:")
            _stmt(s.else_body, depth + 1, out, notes)
    elif isinstance(s, N.Evaluate):
        out.append(f"{pad}{expr_str(s.value)}")
    elif isinstance(s, N.While):
        out.append(f"{pad}while {expr_str(s.cond)}:")
        _stmt(s.body, depth + 1, out, notes)
    elif isinstance(s, (N.Break, N.Continue)):
        out.append(pad + type(s).__name__.lower())
    else:
        out.append(pad + _op(s))


def _for(s: N.For, depth: int, out: list, notes: dict) -> None:
    pad = "    " * depth
    names = ", ".join(v.name for v in s.vars)
    exts = ", ".join(expr_str(e) for e in s.extents)
    kind = {"parallel": "T.Parallel", "pipelined": "T.Pipelined", "unroll": "T.unroll", "vectorized": "T.vectorized",
            "grid": "T.grid"}.get(s.kind, "T.serial")
    extra = f", num_stages={s.num_stages}" if s.kind == "pipelined" and s.num_stages is not None else ""
    out.append(f"{pad}for {names} in {kind}({exts}{extra}):")
    _stmt(s.body, depth + 1, out, notes)


def _op(s) -> str:
    if isinstance(s, N.Copy):
        return f"T.copy({region_str(s.src)}, {region_str(s.dst)})"
    if isinstance(s, N.Gemm):
        flags = "".join([", transpose_A=True" if s.transpose_a else "", ", transpose_B=True" if s.transpose_b else "",
                         f", policy={s.policy}" if s.policy != "Square" else ""])
        return f"T.gemm({region_str(s.a)}, {region_str(s.b)}, {region_str(s.c)}{flags})"
    if isinstance(s, N.Fill):
        return f"T.clear({region_str(s.dst)})" if s.is_clear else f"T.fill({region_str(s.dst)}, {expr_str(s.value)})"
    if isinstance(s, N.Reduce):
        return f"T.reduce_{s.op}({region_str(s.src)}, {region_str(s.dst)}, dim={s.dim}, clear={s.clear})"
    if isinstance(s, N.CumSum):
        return f"T.cumsum({region_str(s.src)}, {region_str(s.dst)}, dim={s.dim}, reverse={s.reverse})"
    if isinstance(s, N.AtomicAdd):
        v = region_str(s.value) if isinstance(s.value, N.Region) else expr_str(s.value)
        return f"T.atomic_add({region_str(s.dst)}, {v})"
    return f"# {type(s).__name__}"
