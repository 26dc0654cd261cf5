"""`T.gemm_sp(A_sparse, E, B, C, transpose_A, transpose_E, transpose_B, policy, clear_accum)`: the 2:4 (1:2 for
32-bit types) structured-sparse GEMM, written out as a decompression of the (block_M, block_K / 2) kept values and
their metadata into a dense shared tile, then the dense `T.gemm` on it.

The metadata is TileLang's natural row-major layout (`tilelang.cuda.intrinsics.sparse_layout`): row m of the
logical (M, K / e_factor) metadata tile holds, for each group of 4 (2 for 32-bit types) consecutive K elements, 4
bits: bits [1:0] the position in the group of the first kept value, bits [3:2] that of the second; one metadata
element packs `bits / 4` groups, lowest group in the lowest bits. For 32-bit types the kept value's position is
bit 1 of the nibble (0b0100: the first of the pair, 0b1110: the second). `transpose_A` / `transpose_E` mean the
shared tile is stored (K / 2, M) / (K / e_factor, M).
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.visitor import walk
from ..language.dtypes import dtype as dtype_of
from .kernel_errors import KernelError
from .regions import region_of


def _bin(op, a, b):
    return N.BinOp(op, a, b)


def _tile(region: N.Region, what: str, node) -> tuple[list[N.Axis], list[int]] | None:
    """The last two sliced axes of an operand region and their compile-time extents (None when they depend on
    values the static check does not know)."""
    axes = [a for a in region.axes if a.sliced][-2:] if region.kind != "point" else []
    extents = [as_int(a.extent) for a in axes]
    if len(axes) == 2 and None in extents and any(isinstance(v, N.Var) and v.kind == "symbolic"
                                                  for a in axes for v in walk(a.extent)):
        return None
    if len(axes) != 2 or None in extents:
        raise KernelError("bad-arguments", f"the {what} tile of T.gemm_sp must be a 2-D tile whose extents are known "
                          "at compile time", node)
    return axes, extents


def _index(region: N.Region, tile: list[N.Axis], rc: tuple) -> tuple:
    """The buffer indices of tile element (row, col) of `region`."""
    it, out = iter(rc), []
    for a in region.axes:
        if any(a is t for t in tile):
            v = next(it)
            out.append(v if as_int(a.start) == 0 else _bin("+", a.start, v))
        else:
            out.append(a.start)
    return tuple(out)


def _load(region, tile, transposed, m, k, span):
    """Element (m, k) of the logical (M, ...) tile, read from a region stored (M, ...) or, transposed, (..., M)."""
    return N.Load(region.buffer, _index(region, tile, (k, m) if transposed else (m, k)), span)


def decompress(p, b, node, ta: bool, te: bool) -> N.Region | None:
    """Emit the dense shared tile of T.gemm_sp's A (allocation and decompression loop); returns it as a region
    (None when the tiles' extents are unknown to the static check)."""
    a_sp, meta = region_of(p, b["A_sparse"]), region_of(p, b["E"])
    tiles = _tile(a_sp, "A_sparse", b["A_sparse"]), _tile(meta, "E", b["E"])
    if None in tiles:
        return None
    (a_tile, a_ext), (e_tile, e_ext) = tiles
    in_dtype = a_sp.buffer.dtype
    bits = dtype_of(in_dtype).bits
    if bits not in (8, 16, 32) or not meta.buffer.dtype.startswith(("int", "uint")):
        raise KernelError("bad-arguments", f"T.gemm_sp takes 8-, 16- or 32-bit values and integer metadata; "
                          f"`{a_sp.buffer.name}` is {in_dtype} and `{meta.buffer.name}` is {meta.buffer.dtype}", node)
    block_m, half_k = (a_ext[1], a_ext[0]) if ta else a_ext
    block_k = 2 * half_k
    e_cols = e_ext[0] if te else e_ext[1]
    group = 2 if bits == 32 else 4  # dense elements per 4-bit metadata nibble
    per_meta = dtype_of(meta.buffer.dtype).bits // 4 * group
    if e_cols * per_meta != block_k or (e_ext[1] if te else e_ext[0]) != block_m:
        raise KernelError("gemm-shape-mismatch", f"T.gemm_sp metadata `{meta.buffer.name}` must be ({block_m}, "
                          f"{block_k // per_meta}) for a ({block_m}, {block_k}) {in_dtype} tile with "
                          f"{meta.buffer.dtype} metadata (one element covers {per_meta} values)", b["E"])
    span = p.span(node)
    dense = N.Buffer(f"{a_sp.buffer.name}_dense", (N.Const(block_m), N.Const(block_k)), in_dtype, "shared.dyn", span)
    p.emit(N.Allocate(dense, None, span))
    m, k = (N.Var(name, "int32", "loop", span) for name in ("sp_m", "sp_k"))
    e = N.Cast("int32", _load(meta, e_tile, te, m, _bin("//", k, N.Const(per_meta)), span), span)
    shift = _bin("*", N.Const(4), _bin("%", _bin("//", k, N.Const(group)), N.Const(per_meta // group)))
    nibble = _bin("&", _bin(">>", e, shift), N.Const(15))
    pos = _bin("%", k, N.Const(group))
    zero = N.Const(0.0 if in_dtype.startswith(("float", "bfloat")) else 0, in_dtype)
    base = _bin("*", _bin("//", k, N.Const(group)), N.Const(2 if group == 4 else 1))
    first = _load(a_sp, a_tile, ta, m, base, span)
    if group == 4:
        second = _load(a_sp, a_tile, ta, m, _bin("+", base, N.Const(1)), span)
        value = N.Select(N.Compare("==", pos, _bin("&", nibble, N.Const(3))), first,
                         N.Select(N.Compare("==", pos, _bin(">>", nibble, N.Const(2))), second, zero, span), span)
    else:
        value = N.Select(N.Compare("==", pos, _bin(">>", _bin("&", nibble, N.Const(3)), N.Const(1))), first, zero,
                         span)
    p.emit(N.For((m, k), (N.Const(0), N.Const(0)), (N.Const(block_m), N.Const(block_k)), "parallel",
                 N.Store(dense, (m, k), value, span), span=span))
    return N.Region(dense, tuple(N.Axis(N.Const(0), d, True) for d in dense.shape), "full", span)
