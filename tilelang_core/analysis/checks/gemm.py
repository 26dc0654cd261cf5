"""T.gemm rules: M/N/K agreement under transposes, accumulator shape, operand scopes, dtypes, static tiles."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.printer import expr_str
from ..infer import canonical_dtype, dtype_bits, is_low_float, region_extents, runtime_kinds, symbolic_vars
from ..walker import Ctx, rule
from .arch import uses_tmem
from .common import related_for, scope_name

_AB_SCOPES = ("shared", "shared.dyn", "local.fragment")
_C_SCOPES = ("local.fragment", "shared", "shared.dyn")
# accumulator dtypes a tensor-core (or FMA) gemm produces for each operand dtype
_ACCUM = {"float16": ("float32", "float16"), "bfloat16": ("float32",), "int8": ("int32",), "uint8": ("int32",),
          "float32": ("float32",), "float64": ("float64",), "tfloat32": ("float32",)}


@rule(N.Gemm)
def check_gemm(g: N.Gemm, ctx: Ctx) -> None:
    """All T.gemm checks for one call."""
    if not _scopes_ok(g, ctx):
        return
    _dtypes(g, ctx)
    mats = _matrices(g, ctx)
    if mats is not None:
        _shapes(g, mats, ctx)


def _scopes_ok(g: N.Gemm, ctx: Ctx) -> bool:
    ok = True
    for name, r, allowed in (("A", g.a, _AB_SCOPES), ("B", g.b, _AB_SCOPES), ("C", g.c, _C_SCOPES)):
        scope = r.buffer.scope
        if scope in allowed:
            continue
        if uses_tmem(r.buffer):  # reported once by the needs-sm100 rule, with the right fix
            ok = False
            continue
        ok = False
        fix = ("copy it into a T.alloc_shared tile (or a fragment) first" if name != "C"
               else "allocate the accumulator with T.alloc_fragment((block_M, block_N), accum_dtype)")
        ctx.emit("gemm-operand-scope",
                 f"T.gemm operand {name} is {r.buffer.name}, {scope_name(scope)}; tensor-core gemm reads "
                 f"{'A and B from shared memory or fragments' if name != 'C' else 'C from a fragment'}: {fix}",
                 r.span or g.span, related=related_for(r.buffer))
    return ok


def _dtypes(g: N.Gemm, ctx: Ctx) -> None:
    a, b, c = (canonical_dtype(r.buffer.dtype) for r in (g.a, g.b, g.c))
    if dtype_bits(a) is None or dtype_bits(b) is None:
        return  # a dtype the frontend could not evaluate
    rel = related_for(g.a.buffer, g.b.buffer, g.c.buffer)
    if a != b and not (is_low_float(a) and is_low_float(b)):
        ctx.emit("gemm-dtype-mismatch",
                 f"T.gemm operands have different dtypes: {g.a.buffer.name} is {a} but {g.b.buffer.name} is {b}; "
                 f"allocate both tiles with the same dtype (only the fp8/fp6/fp4 family may mix)",
                 g.span, related=rel)
        return
    allowed = ("float32", "float16") if is_low_float(a) else _ACCUM.get(a)
    if allowed is not None and dtype_bits(c) is not None and c not in allowed:
        ctx.emit("gemm-dtype-mismatch",
                 f"T.gemm accumulator {g.c.buffer.name} is {c}, but {a} operands accumulate in "
                 f"{' or '.join(allowed)}; allocate {g.c.buffer.name} with dtype {allowed[0]}",
                 g.span, related=rel)


def _matrices(g: N.Gemm, ctx: Ctx):
    """(M, K_A, K_B, N, C_M, C_N) as exprs, or None after reporting a rank/leading-dim problem."""
    out = {}
    for name, r in (("A", g.a), ("B", g.b), ("C", g.c)):
        ext = region_extents(r)
        if len(ext) < 2 and any(as_int(e) is None for e in ext):
            return None  # an unknown shape (the frontend could not see its rank)
        if len(ext) < 2:
            ctx.emit("gemm-shape-mismatch",
                     f"T.gemm operand {name} ({r.buffer.name}) has {len(ext)} dimension(s); gemm operands are "
                     f"matrices: give it two dimensions (leading dimensions of size 1 are allowed)",
                     r.span or g.span, related=related_for(r.buffer))
            return None
        lead = [e for e in ext[:-2] if as_int(e) != 1]
        if lead:
            ctx.emit("gemm-shape-mismatch",
                     f"T.gemm operand {name} ({r.buffer.name}) has leading dimensions "
                     f"{'×'.join(expr_str(e) for e in ext[:-2])}; only the last two dimensions are the "
                     f"matrix and the others must be 1: slice one matrix out (e.g. {r.buffer.name}[0, :, :])",
                     r.span or g.span, related=related_for(r.buffer))
            return None
        out[name] = ext[-2:]
    if _dynamic(g, out, ctx):
        return None
    m, ka = out["A"] if not g.transpose_a else out["A"][::-1]
    kb, n = out["B"] if not g.transpose_b else out["B"][::-1]
    return m, ka, kb, n, out["C"][0], out["C"][1]


def _dynamic(g: N.Gemm, mats: dict, ctx: Ctx) -> bool:
    for name, r in (("A", g.a), ("B", g.b), ("C", g.c)):
        for e in mats[name]:
            if as_int(e) is not None:
                continue
            dyn = [v for v in symbolic_vars(e) if v.kind in runtime_kinds(ctx.func)]
            if dyn:
                ctx.emit("gemm-dynamic-shape",
                         f"T.gemm operand {name} ({r.buffer.name}) has tile dimension {expr_str(e)}, which is "
                         f"only known at run time ({dyn[0].name} is a T.dynamic or scalar parameter); gemm tiles "
                         f"must be compile-time constants: allocate the tile with a constant block size",
                         r.span or g.span, related=related_for(r.buffer))
            return True
    return False


def _shapes(g: N.Gemm, mats, ctx: Ctx) -> None:
    m, ka, kb, n, cm, cn = (as_int(x) for x in mats)
    an, bn, cname = g.a.buffer.name, g.b.buffer.name, g.c.buffer.name
    rel = related_for(g.a.buffer, g.b.buffer, g.c.buffer)
    if ka != kb:
        ta = " (transpose_A)" if g.transpose_a else ""
        tb = " (transpose_B)" if g.transpose_b else ""
        flip = n == ka and kb == cn  # B's two dims swapped would make everything agree
        hint = (f"; {bn} looks stored the other way round: pass transpose_B={not g.transpose_b}" if flip
                else "; make block_K the same for both tiles")
        ctx.emit("gemm-shape-mismatch",
                 f"T.gemm K must agree: {an}{ta} gives K = {ka} but {bn}{tb} gives K = {kb}{hint}",
                 g.span, related=rel)
        return
    if (cm, cn) != (m, n):
        ctx.emit("gemm-accumulator-shape",
                 f"T.gemm accumulator {cname} is {cm}×{cn} but {an} and {bn} produce an M×N = {m}×{n} tile; "
                 f"allocate {cname} as ({m}, {n})",
                 g.span, related=rel)
    elif g.c.buffer.scope == "local.fragment" and _partial(g.c):
        ctx.emit("gemm-accumulator-shape",
                 f"T.gemm accumulates into a part of the fragment {cname}; a fragment accumulator must be the "
                 f"whole buffer: pass {cname} itself (allocate it as ({m}, {n}))",
                 g.c.span or g.span, related=rel)


def _partial(r: N.Region) -> bool:
    """True when a region provably does not cover its whole buffer."""
    if r.kind == "full":
        return False
    for ax, dim in zip(r.axes, r.buffer.shape):
        start, ext, n = as_int(ax.start), as_int(ax.extent), as_int(dim)
        if (start is not None and start != 0) or (ext is not None and n is not None and ext != n):
            return True
    return False
