"""How many consecutive elements each thread holds in a generic fragment layout (Generic.vec): up to 16 bytes, so
copies between the fragment and a tensor move one vector per thread, where that changes nothing else.

A fragment qualifies when its only uses are copies from or to tensors (whole fragment), reductions, fills, and
T.Parallel loops that touch no tensor or shared tile; fragments used in one such loop share a width."""
from __future__ import annotations

from ..analysis.infer import dtype_bits
from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from ..ir.visitor import walk
from .layout_kinds import Generic

MAX_BYTES = 16


def vector_widths(nodes: list, generic: dict) -> dict:
    """Buffer -> elements per thread-vector for the generic layouts in `generic` (Buffer -> Generic); 1 where a
    use needs the element-per-thread order or the shape does not divide."""
    group = {b: b for b in generic}

    def root(b):
        while group[b] is not b:
            b = group[b]
        return b

    bad, allowed = set(), set()
    for node in nodes:
        if isinstance(node, N.For) and node.kind == "parallel":
            inside = [n for n in walk(node.body) if isinstance(n, (N.Load, N.Store))]
            mine = [n.buffer for n in inside if n.buffer in generic]
            if not mine:
                continue
            allowed.update(id(n) for n in inside)
            if any(n.buffer.scope in ("global", "shared", "shared.dyn") for n in inside):
                bad.update(mine)
            for b in mine[1:]:
                group[root(b)] = root(mine[0])
        elif isinstance(node, N.Copy):
            for mine, other in ((node.src, node.dst), (node.dst, node.src)):
                if mine.buffer in generic:
                    allowed.add(id(mine))
                    if other.buffer.scope != "global" or not _whole(mine):
                        bad.add(mine.buffer)
        elif isinstance(node, (N.Reduce, N.Fill)):
            allowed.update(id(getattr(node, f)) for f in ("src", "dst", "region", "buffer")
                           if isinstance(getattr(node, f, None), N.Region))
    for node in nodes:  # any other use (a gemm, an atomic, T.print, an element outside T.Parallel) keeps the order
        if isinstance(node, (N.Region, N.Load, N.Store)) and node.buffer in generic and id(node) not in allowed:
            bad.add(node.buffer)
    members: dict = {}
    for b in generic:
        members.setdefault(root(b), []).append(b)
    widths = {}
    for bufs in members.values():
        vec = _width(bufs, generic) if not any(b in bad for b in bufs) else 1
        widths.update((b, vec) for b in bufs)
    return widths


def _width(bufs: list, generic: dict) -> int:
    shapes = {generic[b].shape for b in bufs}
    if len(shapes) != 1:
        return 1
    shape, threads = shapes.pop(), generic[bufs[0]].threads
    narrowest = min(_bytes(b.dtype) for b in bufs)
    vec = MAX_BYTES // narrowest if narrowest else 1
    while vec > 1 and shape[-1] % (threads * vec):
        vec //= 2
    return max(vec, 1)


def _bytes(dtype: str) -> int:
    bits = dtype_bits(dtype)
    return bits // 8 if bits and bits % 8 == 0 else 0


def _whole(region: N.Region) -> bool:
    if region.kind == "full":
        return True
    shape = shape_ints(region.buffer.shape)
    return (shape is not None and region.kind == "slice" and len(region.axes) == len(shape)
            and all(as_int(a.start) == 0 and as_int(a.extent) == d for a, d in zip(region.axes, shape)))
