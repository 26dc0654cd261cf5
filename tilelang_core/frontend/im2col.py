"""`T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad)`: the copy of one (block_M, block_K) tile
of the unfolded patch matrix of an NHWC image into `col`, written out as the T.Parallel loop TileLang lowers it
to: col[i, j] = img[n, h, w, c] for row m = nhw_step * block_M + i, column k = c_step * block_K + j (k runs over
kh, kw, c), zero where the patch reaches into the padding.
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_int
from .handler_args import depends_on_unknown
from .kernel_errors import KernelError
from .regions import region_of
from .values import to_expr

_PARAMS = ("img", "col", "nhw_step", "c_step", "kernel", "stride", "dilation", "pad")


def _bin(op, a, b):
    return N.BinOp(op, a, b)


def h_im2col(p, b, node, short):
    """T.im2col / T.c2d_im2col: the unfolded-patch tile copy as a T.Parallel loop of guarded loads."""
    given = dict(zip(_PARAMS, node.args))
    given.update({k.arg: k.value for k in node.keywords if k.arg in _PARAMS})
    missing = [name for name in _PARAMS if name not in given]
    if missing:
        raise KernelError("bad-arguments", f"T.{short} takes (img, col, nhw_step, c_step, kernel, stride, dilation, "
                          f"pad); `{missing[0]}` is missing", node)
    img, col = region_of(p, given["img"]), region_of(p, given["col"])
    if len(img.buffer.shape) != 4:
        raise KernelError("bad-arguments", f"T.{short} reads an NHWC image (4 dims); `{img.buffer.name}` has "
                          f"{len(img.buffer.shape)}", given["img"])
    if img.buffer.dtype != col.buffer.dtype:
        raise KernelError("bad-arguments", f"T.{short} copies without converting: `{img.buffer.name}` is "
                          f"{img.buffer.dtype} but `{col.buffer.name}` is {col.buffer.dtype}", given["col"])
    tile = [a for a in col.axes if a.sliced][-2:]
    extents = [a.extent if depends_on_unknown(a.extent) else as_int(a.extent) for a in tile]  # unknown: the JIT knows
    if len(tile) != 2 or None in extents:
        raise KernelError("bad-arguments", f"the col tile of T.{short} must be (block_M, block_K) known at compile "
                          "time", given["col"])
    extents = [to_expr(e) for e in extents]
    nhw, cs, kernel, stride, dil, pad = (to_expr(p.ev.scalar(given[k])) for k in _PARAMS[2:])
    span = p.span(node)
    i, j = (N.Var(name, "int32", "loop", span) for name in ("im_i", "im_j"))
    _, h, w, c = img.buffer.shape
    reach = _bin("*", _bin("-", kernel, N.Const(1)), dil)
    out_h = _bin("+", _bin("//", _bin("-", _bin("-", _bin("+", h, _bin("*", N.Const(2), pad)), reach), N.Const(1)),
                           stride), N.Const(1))
    out_w = _bin("+", _bin("//", _bin("-", _bin("-", _bin("+", w, _bin("*", N.Const(2), pad)), reach), N.Const(1)),
                           stride), N.Const(1))
    out_hw = _bin("*", out_h, out_w)
    m = _bin("+", _bin("*", nhw, extents[0]), i)
    k = _bin("+", _bin("*", cs, extents[1]), j)
    ih = _bin("-", _bin("+", _bin("*", _bin("//", _bin("%", m, out_hw), out_w), stride),
                        _bin("*", _bin("//", k, _bin("*", kernel, c)), dil)), pad)
    iw = _bin("-", _bin("+", _bin("*", _bin("%", m, out_w), stride),
                        _bin("*", _bin("%", _bin("//", k, c), kernel), dil)), pad)
    inside = N.BoolOp("and", (N.Compare(">=", ih, N.Const(0)), N.Compare(">=", iw, N.Const(0)),
                              N.Compare("<", ih, h), N.Compare("<", iw, w)))
    value = N.Select(inside, N.Load(img.buffer, (_bin("//", m, out_hw), ih, iw, _bin("%", k, c)), span),
                     N.Const(0.0 if col.buffer.dtype.startswith(("float", "bfloat")) else 0, col.buffer.dtype), span)
    loop, dst = iter((i, j)), []
    for a in col.axes:
        if any(a is t for t in tile):
            v = next(loop)
            dst.append(v if as_int(a.start) == 0 else _bin("+", a.start, v))
        else:
            dst.append(a.start)
    p.emit(N.For((i, j), (N.Const(0), N.Const(0)), tuple(extents), "parallel",
                 N.Store(col.buffer, tuple(dst), value, span), span=span))


IM2COL_HANDLERS = {"im2col": h_im2col, "c2d_im2col": h_im2col}
