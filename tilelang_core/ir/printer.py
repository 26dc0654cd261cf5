"""IR to TileLang-style Python text: `expr_str` renders expressions (messages, hover), `print_func` a whole
kernel instance (the `parsed` stage of Show IR, pass tests)."""
from __future__ import annotations

from . import nodes as N

_TYPED = ("infinity", "max_value", "min_value")
_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
         "*": 10, "/": 10, "//": 10, "%": 10, "neg": 11, "**": 12}


def expr_str(e, parent_prec: int = 0) -> str:
    """Render an expression as Python source (minimal parentheses)."""
    if isinstance(e, N.Const):
        return repr(e.value) if not isinstance(e.value, float) or e.value == e.value else "T.float32('nan')"
    if isinstance(e, N.Var):
        return e.name
    if isinstance(e, N.BinOp):
        p = _PREC.get(e.op, 9)
        s = f"{expr_str(e.lhs, p)} {e.op} {expr_str(e.rhs, p + 1)}"
        return f"({s})" if p < parent_prec else s
    if isinstance(e, N.Compare):
        p = _PREC["cmp"]
        s = f"{expr_str(e.lhs, p + 1)} {e.op} {expr_str(e.rhs, p + 1)}"
        return f"({s})" if p < parent_prec else s
    if isinstance(e, N.BoolOp):
        p = _PREC[e.op]
        s = f" {e.op} ".join(expr_str(v, p + 1) for v in e.values)
        return f"({s})" if p < parent_prec else s
    if isinstance(e, N.UnaryOp):
        if e.op == "not":
            return f"not {expr_str(e.operand, _PREC['not'])}"
        return f"{e.op}{expr_str(e.operand, _PREC['neg'])}"
    if isinstance(e, N.Call):
        args = [expr_str(a) for a in e.args]
        if e.name in _TYPED and e.dtype:
            args.append(dtype_str(e.dtype))
        return f"T.{e.name}({', '.join(args)})"
    if isinstance(e, N.Cast):
        return f"T.cast({expr_str(e.value)}, {e.dtype!r})"
    if isinstance(e, N.Select):
        return f"T.if_then_else({expr_str(e.cond)}, {expr_str(e.true_value)}, {expr_str(e.false_value)})"
    if isinstance(e, N.Load):
        if e.buffer.scope == "local.var":
            return e.buffer.name
        return f"{e.buffer.name}[{', '.join(expr_str(i) for i in e.indices)}]"
    return f"<{type(e).__name__}>"


def shape_str(shape) -> str:
    """A shape as 'AxB' text (symbolic dims printed as expressions)."""
    return "x".join(expr_str(d) for d in shape) if shape else "scalar"


def dtype_str(dtype: str) -> str:
    """A dtype as the user writes it: T.float16 (or a quoted string for unusual names)."""
    return f"T.{dtype}" if dtype.replace("_", "").isalnum() and dtype != "unknown" else repr(dtype)


def region_str(r: N.Region) -> str:
    """A tile-op operand: `A`, `A[i, j]` (head address) or `A[a:b, :]`."""
    if r.kind == "full":
        return r.buffer.name
    parts = []
    for axis, dim in zip(r.axes, r.buffer.shape + (None,) * len(r.axes)):
        start = expr_str(axis.start)
        if not axis.sliced:
            parts.append(start)
        elif start == "0" and dim is not None and expr_str(axis.extent) == expr_str(dim):
            parts.append(":")
        else:
            parts.append(f"{start}:{expr_str(N.BinOp('+', axis.start, axis.extent)) if start != '0' else expr_str(axis.extent)}")
    return f"{r.buffer.name}[{', '.join(parts)}]"


def print_func(func: N.PrimFunc, notes: dict | None = None) -> str:
    """A kernel instance as TileLang-style Python (constants folded, one statement per line); `notes` maps
    id(stmt) -> a comment printed above that statement (the pass stages use it)."""
    lines = [f"# {func.instance}"] if func.instance else []
    params = []
    for p in func.params:
        if isinstance(p, N.Buffer):
            params.append(f"{p.name}: T.Tensor(({_dims(p.shape)}), {dtype_str(p.dtype)})")
        else:
            params.append(f"{p.name}: {dtype_str(p.dtype)}")
    lines += ["@T.prim_func", f"def {func.name}({', '.join(params)}):"]
    body: list[str] = []
    _stmt(func.body, 1, body, notes or {})
    return "\n".join(lines + (body or ["    pass"])) + "\n"


def stmt_str(stmt, depth: int = 0) -> str:
    """One statement (and its body) as text."""
    out: list[str] = []
    _stmt(stmt, depth, out)
    return "\n".join(out)


def _dims(shape) -> str:
    return ", ".join(expr_str(d) for d in shape) + ("," if len(shape) == 1 else "")


def _stmt(s, depth: int, out: list, notes: dict | None = None) -> None:
    pad = "    " * depth
    if s is None:
        return
    if notes and id(s) in notes:
        out.extend(pad + ln for ln in notes[id(s)].splitlines())
    if isinstance(s, N.SeqStmt):
        for x in s.stmts:
            _stmt(x, depth, out, notes)
        if not s.stmts:
            out.append(pad + "pass")
    elif isinstance(s, N.Launch):
        args = [expr_str(g) for g in s.grid]
        threads = expr_str(s.threads[0]) if len(s.threads) == 1 else f"({', '.join(expr_str(t) for t in s.threads)})"
        names = ", ".join(v.name for v in s.block_vars)
        target = f" as ({names})" if len(s.block_vars) > 1 else (f" as {names}" if names else "")
        cluster = f", cluster_dims={s.cluster}" if s.cluster else ""
        out.append(f"{pad}with T.Kernel({', '.join(args)}, threads={threads}{cluster}){target}:")
        _stmt(s.body, depth + 1, out, notes)
    elif isinstance(s, N.For):
        _for(s, depth, out, notes)
    elif isinstance(s, N.While):
        out.append(f"{pad}while {expr_str(s.cond)}:")
        _stmt(s.body, depth + 1, out, notes)
    elif isinstance(s, N.If):
        out.append(f"{pad}if {expr_str(s.cond)}:")
        _stmt(s.then_body, depth + 1, out, notes)
        if s.else_body is not None:
            out.append(f"{pad}else:")
            _stmt(s.else_body, depth + 1, out, notes)
    else:
        out.append(pad + _simple(s))


def _for(s: N.For, depth: int, out: list, notes: dict | None = None) -> None:
    names = ", ".join(v.name for v in s.vars)
    exts = ", ".join(expr_str(e) for e in s.extents)
    if s.kind in ("parallel", "grid"):
        head = f"T.{'Parallel' if s.kind == 'parallel' else 'grid'}({exts})"
    else:
        start, ext = s.starts[0], s.extents[0]
        stop = _folded(N.BinOp("+", start, ext))
        if isinstance(ext, N.BinOp) and ext.op == "-" and expr_str(ext.rhs) == expr_str(start):
            stop = expr_str(ext.lhs)  # the parser stores stop - start
        rng = exts if expr_str(start) == "0" else f"{expr_str(start)}, {stop}"
        if s.step is not None:
            rng = f"{expr_str(start)}, {stop}, {expr_str(s.step)}"
        kind = {"pipelined": "Pipelined", "serial": "serial", "unroll": "unroll", "vectorized": "vectorized"}[s.kind]
        extra = ""
        if s.kind == "pipelined":
            extra = f", num_stages={s.num_stages or 0}"
            extra += f", order={list(s.order)}" if s.order else ""
            extra += f", stage={list(s.stage)}" if s.stage else ""
        head = f"T.{kind}({rng}{extra})"
    out.append(f"{'    ' * depth}for {names} in {head}:")
    _stmt(s.body, depth + 1, out, notes)


def _folded(e) -> str:
    from .arith import as_int

    v = as_int(e)
    return str(v) if v is not None else expr_str(e)


def _simple(s) -> str:
    if isinstance(s, N.Allocate):
        b = s.buffer
        if b.scope == "local.var":
            init = f", init={expr_str(s.init)}" if s.init is not None else ""
            return f"{b.name} = T.alloc_var({dtype_str(b.dtype)}{init})"
        fn = {"shared.dyn": "alloc_shared", "shared": "alloc_shared", "local.fragment": "alloc_fragment",
              "local": "alloc_local"}.get(b.scope)
        if fn is None:
            return f"{b.name} = T.alloc_buffer(({_dims(b.shape)}), {dtype_str(b.dtype)}, scope={b.scope!r})"
        scope = ", scope='shared'" if b.scope == "shared" else ""
        return f"{b.name} = T.{fn}(({_dims(b.shape)}), {dtype_str(b.dtype)}{scope})"
    if isinstance(s, N.Store):
        if s.buffer.scope == "local.var":
            return f"{s.buffer.name} = {expr_str(s.value)}"
        return f"{s.buffer.name}[{', '.join(expr_str(i) for i in s.indices)}] = {expr_str(s.value)}"
    if isinstance(s, N.LetStmt):
        return f"{s.var.name} = {expr_str(s.value)}"
    if isinstance(s, N.Evaluate):
        return expr_str(s.value)
    if isinstance(s, (N.Break, N.Continue)):
        return type(s).__name__.lower()
    return _tile_op(s)


def _tile_op(s) -> str:
    if isinstance(s, N.Copy):
        return f"T.copy({region_str(s.src)}, {region_str(s.dst)})"
    if isinstance(s, N.Gemm):
        extra = "".join([", transpose_A=True" if s.transpose_a else "", ", transpose_B=True" if s.transpose_b else "",
                         f", policy=T.GemmWarpPolicy.{s.policy}" if s.policy != "Square" else "",
                         _clear_accum_text(s.clear_accum)])
        return f"T.gemm({region_str(s.a)}, {region_str(s.b)}, {region_str(s.c)}{extra})"
    if isinstance(s, N.Fill):
        return f"T.clear({region_str(s.dst)})" if s.is_clear else f"T.fill({region_str(s.dst)}, {expr_str(s.value)})"
    if isinstance(s, N.Reduce):
        return f"T.reduce_{s.op}({region_str(s.src)}, {region_str(s.dst)}, dim={s.dim}" + (
            ", clear=False)" if not s.clear else ")")
    if isinstance(s, N.CumSum):
        return f"T.cum{s.op}({region_str(s.src)}, {region_str(s.dst)}, dim={s.dim}" + (", reverse=True)" if s.reverse else ")")
    if isinstance(s, N.AtomicAdd):
        v = region_str(s.value) if isinstance(s.value, N.Region) else expr_str(s.value)
        return f"T.atomic_add({region_str(s.dst)}, {v})"
    if isinstance(s, N.AnnotateLayout):
        items = ", ".join(f"{b.name}: {_layout(spec)}" for b, spec in s.entries)
        return f"T.annotate_layout({{{items}}})"
    if isinstance(s, N.UseSwizzle):
        return f"T.use_swizzle({s.panel_size}, order={s.order!r}" + (", enable=False)" if not s.enable else ")")
    return f"# <{type(s).__name__}>"


def _clear_accum_text(clear) -> str:
    if clear is True:
        return ", clear_accum=True"
    return f", clear_accum={expr_str(clear)}" if clear is not False else ""


def _layout(spec: N.LayoutSpec) -> str:
    if spec.kind in ("layout", "fragment"):
        name = "Layout" if spec.kind == "layout" else "Fragment"
        return f"T.{name}({tuple(spec.shape) if spec.shape else '...'}, ...)"
    if spec.kind == "swizzled":
        return "tilelang.layout.make_swizzled_layout(...)"
    return f"<{spec.kind} layout>"
