"""Live ranges of shared buffers inside a launch, so that buffers used one after the other can share
memory the way TileLang's MergeSharedMemoryAllocations reuses it.

Positions are the leaf statements in program order. A buffer is live from its first to its last use;
a buffer used anywhere inside a loop is live for the whole loop (loop-carried and pipelined reuse).
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.visitor import walk

_BLOCKS = (N.SeqStmt, N.For, N.If, N.Launch)


def live_ranges(body, buffers) -> dict:
    """Buffer -> (first, last) leaf position for each of `buffers` that is used; unused ones are absent."""
    wanted = set(buffers)
    ranges: dict = {}
    counter = [0]
    _visit(body, wanted, ranges, counter, [])
    return ranges


def _extend(ranges: dict, buf, lo: int, hi: int) -> None:
    old = ranges.get(buf)
    ranges[buf] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))


def _used(stmt, wanted) -> set:
    """Buffers of `wanted` that a leaf statement reads or writes (element accesses and tile-op operands)."""
    out = set()
    for n in walk(stmt):
        buf = getattr(n, "buffer", None)
        if isinstance(n, (N.Load, N.Store, N.Region)) and buf in wanted:
            out.add(buf)
        elif isinstance(n, N.AnnotateLayout):
            continue
    return out


def _visit(s, wanted, ranges, counter, loop_sets) -> None:
    if s is None:
        return
    if isinstance(s, N.SeqStmt):
        for st in s.stmts:
            _visit(st, wanted, ranges, counter, loop_sets)
    elif isinstance(s, N.For):
        start = counter[0]
        inner: set = set()
        _visit(s.body, wanted, ranges, counter, loop_sets + [inner])
        end = max(counter[0] - 1, start)
        for b in inner:
            _extend(ranges, b, start, end)
    elif isinstance(s, N.If):
        _leaf(s.cond, wanted, ranges, counter, loop_sets)
        _visit(s.then_body, wanted, ranges, counter, loop_sets)
        _visit(s.else_body, wanted, ranges, counter, loop_sets)
    elif isinstance(s, N.Launch):
        _visit(s.body, wanted, ranges, counter, loop_sets)
    else:
        _leaf(s, wanted, ranges, counter, loop_sets)


def _leaf(s, wanted, ranges, counter, loop_sets) -> None:
    pos = counter[0]
    counter[0] += 1
    for b in _used(s, wanted):
        _extend(ranges, b, pos, pos)
        for inner in loop_sets:
            inner.add(b)


def peak(sizes: dict, ranges: dict) -> int:
    """The largest total of `sizes` (Buffer -> bytes) over buffers live at the same position."""
    if not ranges:
        return 0
    events = sorted({p for lo, hi in ranges.values() for p in (lo, hi)})
    best = 0
    for p in events:
        best = max(best, sum(sizes[b] for b, (lo, hi) in ranges.items() if lo <= p <= hi and b in sizes))
    return best
