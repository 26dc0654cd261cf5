"""Tile-op operands as Regions: a whole buffer, a slice `A[a:b, :]` or a head address `A[i, j]`."""
from __future__ import annotations

import ast
import dataclasses

from ..ir import nodes as N
from .expr_info import difference
from .kernel_errors import KernelError, describe
from .node_text import node_text


def check_rank(buf: N.Buffer, n: int, node, parser) -> None:
    """Raise buffer-rank-mismatch when `buf` gets `n` indices but has a different rank."""
    if n != len(buf.shape) and not (buf.scope == "local.var" and n == 1):
        raise KernelError("buffer-rank-mismatch", f"`{buf.name}` has {len(buf.shape)} dimension"
                          f"{'s' if len(buf.shape) != 1 else ''} but is indexed with {n}; give one index per "
                          "dimension", node, related=((buf.span, f"`{buf.name}` declared here"),) if buf.span else ())


def reject_step(ev, buf: N.Buffer, idx, node) -> None:
    """Raise slice-step for a slice with a step other than 1 (`A[0:10:2]`): tiles and regions are contiguous.
    `ev` evaluates the step (a factory argument is a constant here)."""
    for i in idx:
        if isinstance(i, ast.Slice) and i.step is not None and ev.eval(i.step) != 1:
            raise KernelError("slice-step", f"`{node_text(node)}`: a slice of `{buf.name}` with a step is not "
                              "supported (buffer regions are contiguous); index the elements in a T.Parallel loop "
                              f"instead, e.g. `{buf.name}[i * {node_text(i.step)}]`", i)


def region_of(parser, node) -> N.Region:
    """A tile-op operand: a buffer, a slice `A[a:b, :]`, a head address `A[i, j]`, or a value holding one."""
    span = parser.span(node)
    if isinstance(node, ast.Subscript):
        base = parser.ev.eval(node.value)
        if isinstance(base, N.Buffer):
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            reject_step(parser.ev, base, idx, node)
            check_rank(base, len(idx), node, parser)
            axes = tuple(_axis(parser, i, dim) for i, dim in zip(idx, base.shape))
            kind = "slice" if any(a.sliced for a in axes) else "point"
            return N.Region(base, axes, kind, span)
    v = parser.ev.eval(node)
    return value_region(v, span, node)


def value_region(v, span, node=None) -> N.Region:
    """A Region from a value (Buffer, Region, Load), else a bad-arguments error."""
    if isinstance(v, N.Region):
        return v
    if isinstance(v, N.Buffer):
        return N.Region(v, tuple(N.Axis(N.Const(0), d, True) for d in v.shape), "full", span)
    if isinstance(v, N.Load):
        return N.Region(v.buffer, tuple(N.Axis(i, N.Const(1), False) for i in v.indices), "point", span)
    raise KernelError("bad-arguments", f"`{node_text(node)}` is not a buffer or a buffer region (got {describe(v)}); "
                      "pass a buffer, a slice like `A[0:64, :]` or a head address like `A[i, j]`", node)


def region_alias_error(region: N.Region, node) -> KernelError:
    """A name bound to a region (`X = S[0:32, :]`) indexed or sliced again: TileLang's buffer regions are tile-op
    operands only."""
    name = node_text(node.value) if isinstance(node, ast.Subscript) else node_text(node)
    return KernelError("bad-arguments", f"`{name}` is a region of `{region.buffer.name}` (a slice bound to a name), "
                       f"which is only valid as a tile-op operand (T.copy, T.gemm, ...); index or slice "
                       f"`{region.buffer.name}` itself", node)


def explicit_region(point: N.Region, other: N.Region) -> N.Region:
    """A head address `A[i, j]` as the slice it stands for beside the tile-op operand `other`: its trailing axes
    take `other`'s sliced extents (`A[i:i + m, j:j + n]` for an m x n `other`)."""
    tile = [a for a in (other.axes or ()) if a.sliced] or [N.Axis(N.Const(0), d, True) for d in other.buffer.shape]
    axes = list(point.axes)
    k = min(len(tile), len(axes))
    head = [N.Axis(a.start, N.Const(1), False) for a in axes[: len(axes) - k]]
    tail = [N.Axis(a.start, t.extent, True) for a, t in zip(axes[len(axes) - k:], tile[len(tile) - k:])]
    return dataclasses.replace(point, axes=tuple(head + tail), kind="slice")


def _axis(parser, idx, dim) -> N.Axis:
    if not isinstance(idx, ast.Slice):
        return N.Axis(parser.ev.index(idx), N.Const(1), False)
    start = parser.ev.index(idx.lower) if idx.lower is not None else N.Const(0)
    stop = parser.ev.index(idx.upper) if idx.upper is not None else dim
    return N.Axis(start, difference(stop, start), True)
