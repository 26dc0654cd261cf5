"""Differential testing: random valid TileLang kernels and a torch reference of the same program.

A `Program` is a small description (a kernel family, sizes with tails, tile sizes, dtypes, an element-wise
expression tree, a reduction, a pipeline depth); `source(p)` renders it as a TileLang file and `reference(p, ...)`
computes what that file must produce with torch, from the description (never from the source). `run(p)` checks
the file (the checks must accept it: a rejected valid kernel is a false positive), builds it for the CPU backend,
runs it on seeded inputs and compares. Nothing here imports tvm at import time.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

FAMILIES = ("map", "imap", "gemm", "atomic", "colsum")
IN_DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Program:
    """One random kernel: `family` picks the template, the rest fills it."""

    family: str
    M: int
    N: int
    K: int = 1
    bm: int = 16
    bn: int = 16
    bk: int = 16
    dtype: str = "float32"
    out_dtype: str = "float32"
    expr: tuple = ("x",)
    reduce: str | None = None
    post: bool = False
    num_stages: int = 0
    threads: int = 128
    loop: str = "Parallel"
    trans_b: bool = False
    guard: bool = False
    atomic: str = "add"
    seed: int = 0
    notes: tuple = field(default=())


def _expr(rng: random.Random, depth: int) -> tuple:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([("x",), ("x",), ("c", rng.choice((0.5, -1.25, 2.0, 3.0))), ("i",), ("j",)])
    op = rng.choice(("+", "-", "*", "max", "min", "abs", "select"))
    if op == "abs":
        return ("abs", _expr(rng, depth - 1))
    if op == "select":
        return ("select", _expr(rng, depth - 1), _expr(rng, depth - 1), _expr(rng, depth - 1))
    return (op, _expr(rng, depth - 1), _expr(rng, depth - 1))


def _int_expr(rng: random.Random, depth: int) -> tuple:
    """Integer expressions whose values stay far inside int32 (products only by small constants)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([("x",), ("x",), ("c", rng.choice((0, 1, -3, 5))), ("i",), ("j",)])
    op = rng.choice(("+", "-", "*c", "//", "%", "&", "|", "^", "max", "min", "abs", ">>", "<<"))
    if op in ("*c", "//", "%", ">>", "<<"):
        c = {"*c": (2, -3), "//": (3, 7, -4), "%": (3, 7, -4), ">>": (1, 2), "<<": (1, 2)}[op]
        return (op, _int_expr(rng, depth - 1), rng.choice(c))
    if op == "abs":
        return ("abs", _int_expr(rng, depth - 1))
    return (op, _int_expr(rng, depth - 1), _int_expr(rng, depth - 1))


def random_program(rng: random.Random) -> Program:
    """A random valid program (sizes not multiples of the tiles on purpose: copies with tails)."""
    family = rng.choice(FAMILIES)
    dtype = rng.choice(IN_DTYPES)
    seed = rng.randrange(2**31)
    if family == "map":
        N = rng.choice((8, 16, 24, 32, 64))
        return Program("map", rng.randint(1, 70), N, bm=rng.choice((4, 8, 16, 32)), dtype=dtype,
                       out_dtype=rng.choice(("float32", dtype)), expr=_expr(rng, 3),
                       reduce=rng.choice((None, "sum", "max", "min")), post=rng.random() < 0.5,
                       threads=rng.choice((32, 64, 128)), seed=seed)
    if family == "imap":
        return Program("imap", rng.randint(1, 70), rng.choice((8, 16, 32)), bm=rng.choice((4, 8, 16)), dtype="int32",
                       out_dtype="int32", expr=_int_expr(rng, 3), threads=rng.choice((32, 128)), seed=seed)
    if family == "gemm":
        return Program("gemm", rng.randint(1, 80), rng.randint(1, 80), K=rng.randint(1, 80),
                       bm=rng.choice((16, 32)), bn=rng.choice((16, 32)), bk=rng.choice((8, 16, 32)),
                       dtype=rng.choice(("float16", "bfloat16", "float32")), out_dtype=rng.choice(("float32", dtype)),
                       num_stages=rng.randint(0, 3), trans_b=rng.random() < 0.5, loop=rng.choice(("Pipelined", "serial")),
                       seed=seed)
    if family == "colsum":  # atomics in a T.Parallel over a reduced (replicated) fragment; max/min: no row tail
        bn, bm, atomic = rng.choice((8, 16, 32)), rng.choice((4, 8, 16)), rng.choice(("add", "add", "max", "min"))
        M = rng.randint(1, 70) if atomic == "add" else bm * rng.randint(1, 4)
        N = rng.randint(1, 80) if rng.random() < 0.5 else bn * rng.randint(1, 4)
        return Program("colsum", M, N, bm=bm, bn=bn, dtype=dtype, guard=N % bn != 0 or rng.random() < 0.3,
                       atomic=atomic, threads=rng.choice((32, 128)), seed=seed)
    bn = rng.choice((8, 16, 32))
    guard = rng.random() < 0.5
    N = rng.randint(1, 80) if guard else bn * rng.randint(1, 4)
    atomic = rng.choice(("add", "add", "max", "min"))
    return Program("atomic", rng.randint(1, 70), N, bm=rng.choice((4, 8, 16)), bn=bn, dtype=dtype,
                   guard=guard or atomic != "add", atomic=atomic, threads=rng.choice((32, 128)), seed=seed)


# --- rendering --------------------------------------------------------------------------------------------


def _render(e: tuple, integer: bool = False) -> str:
    kind = e[0]
    if kind == "x":
        return "F[i, j]"
    if kind == "c":
        return repr(e[1])
    if kind == "i":
        return 'T.cast(by * bm + i, "float32")' if not integer else "(by * bm + i)"
    if kind == "j":
        return 'T.cast(j, "float32")' if not integer else "j"
    if kind in ("*c", "//", "%", ">>", "<<"):
        return f"({_render(e[1], integer)} {kind.rstrip('c')} {e[2]})"
    if kind == "abs":
        return f"T.abs({_render(e[1], integer)})"
    r = [_render(x, integer) for x in e[1:]]
    if kind == "select":
        return f"T.if_then_else({r[0]} > {r[1]}, {r[1]}, {r[2]})"
    if kind in ("max", "min"):
        return f"T.{kind}({r[0]}, {r[1]})"
    return f"({r[0]} {kind} {r[1]})"


def source(p: Program) -> str:
    """The TileLang file of a program (first kernel = the program)."""
    return {"map": _map_source, "imap": _map_source, "gemm": _gemm_source, "atomic": _atomic_source,
            "colsum": _colsum_source}[p.family](p)


def _map_source(p: Program) -> str:
    reduce = ""
    if p.reduce:
        reduce = f"            T.reduce_{p.reduce}(F, Rf, dim=1)\n"
        if p.post:
            reduce += ("            for i, j in T.Parallel(bm, N):\n"
                       "                F[i, j] = F[i, j] - Rf[i]\n")
        reduce += "            T.copy(Rf, R[by * bm])\n"
    return f'''import tilelang.language as T


def build(M, N, bm):
    @T.prim_func
    def kern(X: T.Tensor((M, N), "{p.dtype}"), Y: T.Tensor((M, N), "{p.out_dtype}"), R: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads={p.threads}) as by:
            S = T.alloc_shared((bm, N), "{p.dtype}")
            F = T.alloc_fragment((bm, N), "{'int32' if p.family == 'imap' else 'float32'}")
            Rf = T.alloc_fragment((bm,), "float32")
            T.copy(X[by * bm, 0], S)
            T.copy(S, F)
            for i, j in T.Parallel(bm, N):
                F[i, j] = {_render(p.expr, p.family == "imap")}
{reduce}            T.copy(F, Y[by * bm, 0])

    return kern


kernel = build({p.M}, {p.N}, {p.bm})
'''


def _gemm_source(p: Program) -> str:
    b_shape, b_tile, b_at = ("(N, K)", "(bn, bk)", "B[bx * bn, k * bk]") if p.trans_b else \
        ("(K, N)", "(bk, bn)", "B[k * bk, bx * bn]")
    loop = (f"T.Pipelined(T.ceildiv(K, bk), num_stages={p.num_stages})" if p.loop == "Pipelined"
            else "T.serial(T.ceildiv(K, bk))")
    return f'''import tilelang.language as T


def build(M, N, K, bm, bn, bk):
    @T.prim_func
    def kern(A: T.Tensor((M, K), "{p.dtype}"), B: T.Tensor({b_shape}, "{p.dtype}"), C: T.Tensor((M, N), "{p.out_dtype}")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "{p.dtype}")
            B_s = T.alloc_shared({b_tile}, "{p.dtype}")
            C_f = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_f)
            for k in {loop}:
                T.copy(A[by * bm, k * bk], A_s)
                T.copy({b_at}, B_s)
                T.gemm(A_s, B_s, C_f, transpose_B={p.trans_b})
            T.copy(C_f, C[by * bm, bx * bn])

    return kern


kernel = build({p.M}, {p.N}, {p.K}, {p.bm}, {p.bn}, {p.bk})
'''


def _atomic_source(p: Program) -> str:
    add = f'T.atomic_{p.atomic}(Out[bx * bn + j], T.cast(S[i, j], "float32"))'
    # max/min must not see the zero padding of rows past M; a sum does not mind it
    cond = "bx * bn + j < N" if p.atomic == "add" else "by * bm + i < M and bx * bn + j < N"
    body = (f"                if {cond}:\n                    {add}\n" if p.guard
            else f"                {add}\n")
    return f'''import tilelang.language as T


def build(M, N, bm, bn):
    @T.prim_func
    def kern(X: T.Tensor((M, N), "{p.dtype}"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads={p.threads}) as (bx, by):
            S = T.alloc_shared((bm, bn), "{p.dtype}")
            T.copy(X[by * bm, bx * bn], S)
            for i, j in T.Parallel(bm, bn):
{body}
    return kern


kernel = build({p.M}, {p.N}, {p.bm}, {p.bn})
'''


def _colsum_source(p: Program) -> str:
    add = f"T.atomic_{p.atomic}(Out[bx * bn + j], part[j])"
    body = f"                if bx * bn + j < N:\n                    {add}\n" if p.guard else f"                {add}\n"
    return f'''import tilelang.language as T


def build(M, N, bm, bn):
    @T.prim_func
    def kern(X: T.Tensor((M, N), "{p.dtype}"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads={p.threads}) as (bx, by):
            F = T.alloc_fragment((bm, bn), "float32")
            part = T.alloc_fragment((bn,), "float32")
            T.copy(X[by * bm, bx * bn], F)
            T.reduce_{ {"add": "sum"}.get(p.atomic, p.atomic) }(F, part, dim=0)
            for j in T.Parallel(bn):
{body}
    return kern


kernel = build({p.M}, {p.N}, {p.bm}, {p.bn})
'''


# --- reference --------------------------------------------------------------------------------------------


def inputs(p: Program):
    """Seeded input and output tensors, in parameter order (outputs pre-filled with a sentinel)."""
    import torch

    g = torch.Generator().manual_seed(p.seed)
    dt = getattr(torch, p.dtype)
    out = getattr(torch, p.out_dtype)
    if p.family == "map":
        return [torch.randn(p.M, p.N, generator=g).to(dt), torch.full((p.M, p.N), 7.0).to(out),
                torch.full((p.M,), 7.0)]
    if p.family == "imap":
        return [torch.randint(-50, 51, (p.M, p.N), generator=g, dtype=torch.int32),
                torch.full((p.M, p.N), 7, dtype=torch.int32), torch.full((p.M,), 7.0)]
    if p.family == "gemm":
        b = torch.randn(p.N, p.K, generator=g) if p.trans_b else torch.randn(p.K, p.N, generator=g)
        return [torch.randn(p.M, p.K, generator=g).to(dt), b.to(dt), torch.full((p.M, p.N), 7.0).to(out)]
    start = {"add": 0.0, "max": float("-inf"), "min": float("inf")}[p.atomic]
    return [torch.randn(p.M, p.N, generator=g).to(dt), torch.full((p.N,), start)]


def _eval(e: tuple, x, rows, cols):
    import torch

    kind = e[0]
    if kind == "x":
        return x
    if kind == "c":
        return torch.full_like(x, e[1])
    if kind == "i":
        return rows.expand_as(x)
    if kind == "j":
        return cols.expand_as(x)
    if kind == "abs":
        return _eval(e[1], x, rows, cols).abs()
    if kind in ("*c", "//", "%", ">>", "<<"):
        a, c = _eval(e[1], x, rows, cols), e[2]
        return {"*c": lambda: a * c, "//": lambda: torch.div(a, c, rounding_mode="floor"),
                "%": lambda: torch.remainder(a, c), ">>": lambda: a >> c, "<<": lambda: a << c}[kind]()
    if kind == "select":
        a, b, c = (_eval(s, x, rows, cols) for s in e[1:])
        return torch.where(a > b, b, c)
    a, b = _eval(e[1], x, rows, cols), _eval(e[2], x, rows, cols)
    ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "max": lambda: torch.maximum(a, b),
           "min": lambda: torch.minimum(a, b), "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b}
    return ops[kind]()


def reference(p: Program, args) -> dict:
    """Expected values: {argument index: tensor} for the outputs of the program on `args`."""
    import torch

    if p.family == "imap":
        x = args[0].long()
        f = _eval(p.expr, x, torch.arange(p.M)[:, None], torch.arange(p.N)[None, :])
        return {1: f.to(torch.int32)}
    if p.family == "map":
        x = args[0].float()
        rows = torch.arange(p.M, dtype=torch.float32)[:, None]
        cols = torch.arange(p.N, dtype=torch.float32)[None, :]
        f = _eval(p.expr, x, rows, cols)
        out = {}
        if p.reduce:
            r = {"sum": lambda t: t.sum(1), "max": lambda t: t.amax(1), "min": lambda t: t.amin(1)}[p.reduce](f)
            out[2] = r
            if p.post:
                f = f - r[:, None]
        out[1] = f.to(getattr(torch, p.out_dtype))
        return out
    if p.family == "gemm":
        a, b = args[0].float(), args[1].float()
        return {2: (a @ (b.T if p.trans_b else b)).to(getattr(torch, p.out_dtype))}
    x = args[0].float()
    return {1: {"add": lambda: x.sum(0), "max": lambda: x.amax(0), "min": lambda: x.amin(0)}[p.atomic]()}


def _tolerance(p: Program, ref) -> float:
    if p.family == "imap":
        return 0.0
    low = {"float16": 1e-3, "bfloat16": 8e-3}
    rel = max(low.get(p.out_dtype, 1e-5), 1e-5 if p.family == "map" else 1e-4)
    if p.family != "map":
        rel = max(rel, low.get(p.dtype, 0.0) * 0.1)
    scale = ref.float().abs().max().item() if ref.numel() else 1.0
    return rel * max(scale, 1.0) * (max(p.K, p.M) ** 0.5 if p.family != "map" else 1.0)


def run(p: Program) -> str | None:
    """Check, build for the CPU and compare with the reference: None, or what went wrong."""
    from tilelang_core.check import check_source
    from tilelang_core.codegen import cpu
    from tilelang_core.diagnostics import CompileError

    text = source(p)
    result = check_source(text, "generated.py")
    if result.errors:
        d = result.errors[0]
        return f"rejected by the checks: {d.code} line {d.span.line}: {d.message[:200]}"
    try:
        module = cpu.build(result.kernels[0])
    except CompileError as exc:
        return f"lowering failed: {exc}"[:400]
    args = inputs(p)
    module(*args)
    for index, want in reference(p, args).items():
        got = args[index].float()
        err = (got - want.float()).abs().max().item() if want.numel() else 0.0
        if not err <= _tolerance(p, want):  # NaN fails too
            bad = int(((got - want.float()).abs() > _tolerance(p, want)).sum())
            return f"mismatch in argument {index}: max error {err:.3g}, {bad} of {want.numel()} elements"
    return None
