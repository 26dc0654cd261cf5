"""Placement of shared buffers in the one dynamic shared-memory pool: one after another, or, when that does not
fit the architecture, buffers whose live ranges do not overlap share bytes (the peak the checks report)."""
from __future__ import annotations

from ...analysis.index import index_kernel
from ...ir import nodes as N


def sequential(sizes: list[int], align) -> list[int]:
    """Offsets of buffers laid out one after another, each aligned to `align` bytes (one for all, or a list)."""
    offsets, end = [], 0
    for size, a in zip(sizes, _each(align, sizes)):
        end = _up(end, a)
        offsets.append(end)
        end += size
    return offsets


def packed(sizes: list[int], ranges: list, align) -> list[int]:
    """Offsets where buffers live at the same time never overlap; a range of None is live everywhere.

    Largest first, each at the lowest aligned offset clear of every placed buffer it is live together with."""
    offsets: list = [None] * len(sizes)
    aligns = _each(align, sizes)
    for i in sorted(range(len(sizes)), key=lambda k: -sizes[k]):
        clash = [(offsets[j], offsets[j] + sizes[j]) for j in range(len(sizes))
                 if offsets[j] is not None and _together(ranges[i], ranges[j])]
        at = 0
        for lo, hi in sorted(clash):
            if at + sizes[i] <= lo:
                break
            at = max(at, _up(hi, aligns[i]))
        offsets[i] = at
    return offsets


def live_ranges(func: N.PrimFunc, labels: list) -> list:
    """(first, last) use position of each shared buffer label in `func` (views count for their root);
    None for labels that are not buffers (scratch) or are never used."""
    live = index_kernel(func).live
    by_root: dict = {}
    for buf, (lo, hi) in live.items():
        root = buf
        while root.base is not None:
            root = root.base
        old = by_root.get(root)
        by_root[root] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
    return [by_root.get(label) if isinstance(label, N.Buffer) else None for label in labels]


def _each(align, sizes: list) -> list:
    return [align] * len(sizes) if isinstance(align, int) else list(align)


def _together(a, b) -> bool:
    return a is None or b is None or (a[0] <= b[1] and b[0] <= a[1])


def _up(n: int, align: int) -> int:
    return (n + align - 1) // align * align
