"""Fragment layout inference: which layout (layout_kinds.py) each `local.fragment` buffer gets.

Before: `C_local = T.alloc_fragment((128, 128), "float32")`, `T.gemm(A_s, B_s, C_local)`,
`T.reduce_max(C_local, m, dim=1)`.
After: {C_local: mma(128x128, warps 2x2), m: mma-rows(of C_local)}; every other fragment gets a
layout from the Parallel loops and copies that tie it to one (or the generic/replicated default).
"""
from __future__ import annotations

from ..analysis.reductions import warp_split
from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from ..ir.visitor import walk
from .generic_vectors import vector_widths
from .layout_kinds import Generic, Mma, MmaRow, Replicated, View


class LayoutError(Exception):
    """No consistent layout exists; carries the span of the construct that conflicts."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.span = span


def warp_partition(policy: str, m: int, n: int, warps: int) -> tuple[int, int]:
    """Split `warps` over an MxN gemm tile (analysis.reductions.warp_split); raises LayoutError when none fits."""
    split = warp_split(policy, m, n, warps)
    if split is None:
        raise LayoutError(f"a {m}x{n} gemm tile cannot be split over {warps} warps into 16x8 mma atoms; "
                          "use tile sizes that are multiples of 16 (M) and 8 (N) per warp")
    return split


def _full_vars(loop: N.For, indices) -> bool:
    return len(indices) == len(loop.vars) and all(isinstance(i, N.Var) and i is v for i, v in zip(indices, loop.vars))


def unit_dims_dropped(indices, loop_vars, extents) -> bool:
    """True when `indices` are `loop_vars` in order with the vars of extent 1 left out (`x[j]` in a Parallel loop
    over (1, D) reaches every element of `x` once, as `x[i, j]` would)."""
    kept = [v for v, e in zip(loop_vars, extents) if e != 1]
    return len(indices) == len(kept) and all(isinstance(i, N.Var) and i is v for i, v in zip(indices, kept))


def _all_iterations(loop: N.For, indices) -> bool:
    """True when `indices` are the loop's vars in order, or those with the vars of extent 1 left out."""
    return _full_vars(loop, indices) or unit_dims_dropped(indices, loop.vars, [as_int(e) for e in loop.extents])


def fragment_accesses(stmt):
    """(buffer, indices) of every fragment Load/Store inside `stmt`."""
    for node in walk(stmt):
        if isinstance(node, (N.Load, N.Store)) and node.buffer.scope == "local.fragment":
            yield node.buffer, node.indices


def infer_layouts(func: N.PrimFunc, threads: int, wgmma: frozenset = frozenset(), roles=None) -> dict:
    """Map every fragment Buffer of `func` to a layout (raises LayoutError when they conflict).

    `wgmma` holds id()s of the gemms lowered to Hopper wgmma (accumulators interleaved per warpgroup).
    `roles` (passes.roles.Roles): a tile op inside a thread role is laid out over the role's threads.
    The rows a reduction takes from a tile split over warps along N are held per warp (MmaRow, combined across
    the warps); when that conflicts with another use of those rows, they are replicated on every thread."""
    try:
        return _infer(func, threads, wgmma, roles, split_rows=True)
    except LayoutError:
        return _infer(func, threads, wgmma, roles, split_rows=False)


def _infer(func: N.PrimFunc, threads: int, wgmma: frozenset, roles, split_rows: bool) -> dict:
    layouts: dict = {}
    threads_of = roles.threads_of if roles is not None else (lambda node, default: default)

    def assign(buf, layout, span):
        old = layouts.get(buf)
        if old is not None and old != layout:
            raise LayoutError(f"fragment '{buf.name}' needs two different layouts: {old.describe()} and "
                              f"{layout.describe()}; copy it into a second fragment", span)
        layouts[buf] = layout
        return old is None

    nodes = list(walk(func.body))
    for g in (n for n in nodes if isinstance(n, N.Gemm)):
        c = g.c.buffer
        if c.scope != "local.fragment":
            continue
        m, n = _mat_shape(c)
        wg, warps = id(g) in wgmma, max(threads_of(g, threads) // 32, 1)
        wm, wn = (warps, 1) if wg else warp_partition(g.policy, m, n, warps)
        assign(c, Mma(m, n, wm, wn, wg), g.span)
        a = g.a.buffer
        if a.scope == "local.fragment":
            if g.transpose_a and wg:
                raise LayoutError(f"T.gemm with A in registers ('{a.name}', a fragment) and transpose_A=True is not "
                                  "supported by the wgmma lowering; stage A in shared memory (T.alloc_shared) or "
                                  "store it untransposed", g.span)
            am, ak = _mat_shape(a)
            if g.transpose_a:  # the buffer is [K][M]: the same registers as A, each element stored at (k, m)
                am, ak = ak, am
            assign(a, Mma(am, ak, wm, 1, wg, rep=wn, transpose=g.transpose_a), g.span)  # rows of M slice w // wn
    views = _fragment_views(nodes)
    changed = True
    while changed:
        changed = False
        for node in nodes:
            changed |= _propagate(node, layouts, assign, split_rows)
        changed |= _derive_views(views, layouts, assign)
    for node in nodes:
        if isinstance(node, N.Allocate) and node.buffer.scope == "local.fragment" and node.buffer not in layouts:
            shape = shape_ints(node.buffer.shape)
            if shape is None:
                raise LayoutError(f"fragment '{node.buffer.name}' has a shape that is not known at compile "
                                  "time; fragments need static shapes", node.span)
            users = _user_threads(node.buffer, nodes, threads_of, threads)
            replicate = (_partial_use(node.buffer, nodes) or len(shape) == 1 and shape[0] < max(users)
                         or _element_only(node.buffer, nodes))
            if not replicate and len(users) > 1:
                raise LayoutError(f"fragment '{node.buffer.name}' is used by thread roles of "
                                  f"{' and '.join(map(str, users))} threads; give each role its own fragment",
                                  node.span)
            layouts[node.buffer] = Replicated(shape) if replicate else Generic(shape, users[0])
    generic = {b: lay for b, lay in layouts.items() if isinstance(lay, Generic)}
    for b, vec in vector_widths(nodes, generic).items():
        if vec > 1:
            layouts[b] = Generic(generic[b].shape, generic[b].threads, vec)
    _derive_views(views, layouts, assign)
    return layouts


def _fragment_views(nodes) -> list:
    """Views (T.reshape / T.view) of fragments that `nodes` access, in order."""
    out = []
    for node in nodes:
        bufs = [node.buffer] if isinstance(node, (N.Load, N.Store)) else [
            getattr(node, f).buffer for f in ("src", "dst", "c") if isinstance(getattr(node, f, None), N.Region)]
        for b in bufs:
            if b.base is not None and b.scope == "local.fragment" and b not in out:
                out.append(b)
    return out


def _derive_views(views, layouts, assign) -> bool:
    """Give each fragment view the layout of its base seen through the reshape."""
    changed = False
    for v in views:
        base = v.base
        if base not in layouts:
            continue
        lay, vshape, bshape = layouts[base], shape_ints(v.shape), shape_ints(base.shape)
        if vshape is None or bshape is None or v.dtype != base.dtype or _count(vshape) != _count(bshape):
            raise LayoutError(f"fragment view '{v.name}' of '{base.name}' needs a static shape with as many "
                              f"elements and the same dtype as '{base.name}'", v.span)
        if isinstance(lay, Generic) and not lay.exact:
            raise LayoutError(f"fragment view '{v.name}' views '{base.name}', whose {lay.size} elements do not "
                              "spread evenly over the threads; use a tile size that is a multiple of the thread "
                              "count", v.span)
        derived = Replicated(tuple(vshape)) if isinstance(lay, Replicated) else View(lay, tuple(bshape), tuple(vshape))
        changed |= assign(v, derived, v.span)
    return changed


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _mat_shape(buf) -> tuple[int, int]:
    shape = shape_ints(buf.shape)
    if shape is None or len(shape) < 2:
        raise LayoutError(f"gemm operand '{buf.name}' needs a static 2-D shape", buf.span)
    return shape[-2], shape[-1]


def _propagate(node, layouts, assign, split_rows: bool) -> bool:
    """One propagation step through a Parallel loop, a fragment copy or a reduction (`split_rows`: a reduction
    of a tile split over warps along N gives its rows the MmaRow layout as well)."""
    changed = False
    if isinstance(node, N.For) and node.kind == "parallel":
        full = [b for b, idx in fragment_accesses(node.body) if _full_vars(node, idx)]
        known = [layouts[b] for b in full if b in layouts]
        if known:
            for b in full:
                changed |= assign(b, known[0], node.span)
            parent = known[0] if isinstance(known[0], Mma) else None
            if parent is not None and parent.wn == 1 and not parent.transpose:
                for b, idx in fragment_accesses(node.body):
                    if len(idx) == 1 and isinstance(idx[0], N.Var) and idx[0] is node.vars[0] and len(node.vars) == 2:
                        changed |= assign(b, MmaRow.of(parent), node.span)
        row = [layouts[b] for b in full if isinstance(layouts.get(b), MmaRow)]
        if row and len(node.vars) == 1:
            for b in full:
                changed |= assign(b, row[0], node.span)
    elif isinstance(node, N.Copy):
        s, d = node.src.buffer, node.dst.buffer
        if s.scope == d.scope == "local.fragment" and shape_ints(s.shape) == shape_ints(d.shape):
            lay = layouts.get(s) or layouts.get(d)
            if lay is not None:
                changed |= assign(s, lay, node.span) | assign(d, lay, node.span)
    elif isinstance(node, N.Reduce):
        src = layouts.get(node.src.buffer)
        if (isinstance(src, Mma) and (src.wn == 1 or split_rows and src.rep == 1) and not src.transpose
                and node.dim == 1 and node.dst.buffer.scope == "local.fragment"):
            if shape_ints(node.dst.buffer.shape) in ((src.m,), (src.m, 1)):
                changed |= assign(node.dst.buffer, MmaRow.of(src), node.span)
    return changed


def _user_threads(buf, nodes, threads_of, threads: int) -> list:
    """Thread counts of the roles that access fragment `buf`, sorted (the block's when none)."""
    counts = set()
    for node in nodes:
        if isinstance(node, (N.Load, N.Store)):
            bufs = (node.buffer,)
        else:
            bufs = tuple(getattr(node, f).buffer for f in ("src", "dst", "c", "a", "b", "value")
                         if isinstance(getattr(node, f, None), N.Region))
        if buf in bufs:
            counts.add(threads_of(node, threads))
    return sorted(counts) or [threads]


def _element_only(buf, nodes) -> bool:
    """True when only scalar statements outside T.Parallel loops index `buf` (no tile op, no Parallel loop): every
    thread keeps its own copy of every element (a per-thread array, `prefetch[stage, r] = ...` in a serial loop)."""
    for node in nodes:
        if isinstance(node, N.For) and node.kind == "parallel":
            if any(b is buf for b, _ in fragment_accesses(node.body)):
                return False
        elif isinstance(node, N.TILE_OPS) and any(
                isinstance(getattr(node, f, None), N.Region) and getattr(node, f).buffer is buf
                for f in ("src", "dst", "c", "a", "b", "value")):
            return False
    return True


def _partial_use(buf, nodes) -> bool:
    """True when a Parallel loop indexes `buf` with fewer loop vars than it has (a broadcast use)."""
    for node in nodes:
        if isinstance(node, N.For) and node.kind == "parallel":
            for b, idx in fragment_accesses(node.body):
                if b is buf and not _all_iterations(node, idx):
                    return True
        if isinstance(node, N.Reduce) and node.dst.buffer is buf:
            return True
    return False


def describe(layouts: dict) -> str:
    """Text table of inferred layouts (the `layouts` stage)."""
    lines = [f"# {buf.name}: {lay.describe()}" for buf, lay in layouts.items()]
    return "\n".join(lines) if lines else "# no fragments"

