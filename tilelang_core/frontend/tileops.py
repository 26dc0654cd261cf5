"""Handlers of the tile ops in a kernel: copy, gemm (dense, sparse, wgmma), fill/clear, reductions, cumsum,
atomics, layout annotations and block swizzles, each turned into tile IR by one small handler.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from .gemm_sp import decompress as decompress_sparse
from .handler_args import arg, const_bool, const_int, depends_on_unknown, shape_of, src_text
from .kernel_errors import KernelError
from .fragment_threads import fragment_threads, host_layout_spec
from .regions import region_of, value_region
from .values import BuiltinRef, EnumValue, LiveLayout, to_expr

TMA_ATOMIC_DTYPES = ("float16", "bfloat16", "float32", "int32", "uint32", "uint64")  # cp.reduce.async.bulk .add
REDUCE_OPS = {"reduce_max": "max", "reduce_min": "min", "reduce_sum": "sum", "reduce_abssum": "abssum",
              "reduce_absmax": "absmax", "reduce_bitand": "bitand", "reduce_bitor": "bitor", "reduce_bitxor": "bitxor"}


def h_copy(p, b, node, short):
    """T.copy(src, dst); between two elements (`T.copy(A[i, j], B[i, j])`, e.g. in a T.Parallel body) it is the
    element store `B[i, j] = A[i, j]`, as TileLang lowers it."""
    src, dst, span = region_of(p, b["src"]), region_of(p, b["dst"]), p.span(node)
    if src.kind == "point" and dst.kind == "point":
        load = N.Load(src.buffer, tuple(a.start for a in src.axes), src.span)
        p.emit(N.Store(dst.buffer, tuple(a.start for a in dst.axes), load, span))
        return
    p.emit(N.Copy(src, dst, span))


def h_async_copy(p, b, node, short):
    """T.async_copy(src, dst): a cp.async copy from global into shared memory, lowered as T.copy."""
    src, dst = region_of(p, b["src"]), region_of(p, b["dst"])
    if src.buffer.scope != "global" or dst.buffer.scope not in ("shared", "shared.dyn"):
        raise KernelError("async-copy-scope", "T.async_copy only supports global->shared/shared.dyn copies (cp.async); "
                          f"{src.buffer.name} is {src.buffer.scope} and {dst.buffer.name} {dst.buffer.scope}: use "
                          "T.copy", node)
    p.emit(N.Copy(src, dst, p.span(node)))


def h_gemm(p, b, node, short):
    """T.gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum); T.wgmma_gemm too (lowered as a gemm that
    waits for its own wgmma group, so T.wait_wgmma has nothing left to wait for)."""
    p.emit(N.Gemm(region_of(p, b["A"]), region_of(p, b["B"]), region_of(p, b["C"]),
                  const_bool(p, b, "transpose_A", "transpose_A"), const_bool(p, b, "transpose_B", "transpose_B"),
                  _policy(p, b), _clear_accum(p, b), p.span(node), short == "wgmma_gemm"))


def h_gemm_sp(p, b, node, short):
    """T.gemm_sp(A_sparse, E, B, C, ...): A decompressed into a dense shared tile (gemm_sp.py), then T.gemm."""
    dense = decompress_sparse(p, b, node, const_bool(p, b, "transpose_A", "transpose_A"),
                              const_bool(p, b, "transpose_E", "transpose_E"))
    if dense is None:  # tile extents unknown to the static check
        return
    p.emit(N.Gemm(dense, region_of(p, b["B"]), region_of(p, b["C"]), False,
                  const_bool(p, b, "transpose_B", "transpose_B"), _policy(p, b), _clear_accum(p, b), p.span(node)))


def _policy(p, b) -> str:
    policy = arg(p, b, "policy")
    return policy.member if isinstance(policy, EnumValue) else (
        policy if policy in ("Square", "FullRow", "FullCol") else "Square")


def _clear_accum(p, b):
    """clear_accum: a compile-time bool, or a run-time condition (`clear_accum=k == 0` clears on the first step)."""
    v = arg(p, b, "clear_accum")
    e = to_expr(v) if not isinstance(v, (bool, int)) and v is not None and not depends_on_unknown(v) else None
    if e is not None and as_int(e) is None:
        return e
    return const_bool(p, b, "clear_accum", "clear_accum")


def h_fill(p, b, node, short):
    """T.fill(buffer, value) and T.clear(buffer)."""
    dst = region_of(p, b["buffer"])
    if short == "clear":
        p.emit(N.Fill(dst, N.Const(0, dst.buffer.dtype), True, p.span(node)))
    else:
        p.emit(N.Fill(dst, p.ev.scalar(b["value"]) if isinstance(b["value"], ast.AST) else N.Const(0),
                      False, p.span(node)))


def h_reduce(p, b, node, short):
    """T.reduce_<op>(buffer, out, dim=-1, clear=True)."""
    src, dst = region_of(p, b["buffer"]), region_of(p, b["out"])
    dim = const_int(p, b, "dim", f"the `dim` of T.{short}")
    if dim is None:  # depends on values unknown statically: nothing reliable to check
        return
    rank = len(src.buffer.shape)
    norm = dim + rank if dim < 0 and -rank <= dim else dim
    clear = const_bool(p, b, "clear", "clear")
    if short.startswith("reduce_bit") and not src.buffer.dtype.startswith(("int", "uint", "unknown")):
        raise KernelError("bad-arguments", f"T.{short} combines the bits of integers; '{src.buffer.name}' is "
                          f"{src.buffer.dtype} (reduce an integer tile, or T.reinterpret the values first)", node)
    nan = "nan_propagate" in b and const_bool(p, b, "nan_propagate", "nan_propagate")
    p.emit(N.Reduce(REDUCE_OPS[short], src, dst, norm, clear, dim, p.span(node), nan))


def h_cumsum(p, b, node, short):
    """T.cumsum / T.cummax(src, dst=None, dim=0, reverse=False)."""
    src = region_of(p, b["src"])
    dst = region_of(p, b["dst"]) if isinstance(b.get("dst"), ast.AST) else src
    dim = const_int(p, b, "dim", f"the `dim` of T.{short}")
    if dim is None:
        return
    p.emit(N.CumSum(src, dst, dim, const_bool(p, b, "reverse", "reverse"), p.span(node), op=short[3:]))


def h_atomic_add(p, b, node, short):
    """T.atomic_add(dst, value): scalar or tile form."""
    dst = region_of(p, b["dst"])
    vnode = b["value"]
    v = _region_or_value(p, vnode)
    value = v if isinstance(v, N.Region) and v.kind != "point" else p.ev.scalar(vnode)
    if const_bool(p, b, "return_prev", "return_prev") and dst.kind == "point" and not isinstance(value, N.Region):
        # the value form: an intrinsic call whose result is the element's previous value
        old = N.Load(dst.buffer, tuple(a.start for a in dst.axes), dst.span)
        return N.Call("atomic_add", (old, value), dst.buffer.dtype, p.span(node))
    use_tma = const_bool(p, b, "use_tma", "use_tma")
    if use_tma:
        _check_tma_atomic(dst, value, node)
    p.emit(N.AtomicAdd(dst, value, p.span(node), use_tma))


def _check_tma_atomic(dst: N.Region, value, node) -> None:
    """T.atomic_add(..., use_tma=True): a TMA reduce-add of a shared tile into a global tensor, of a dtype the bulk
    reduction has (tma-atomic-unsupported otherwise)."""
    if not isinstance(value, N.Region) or not value.buffer.scope.startswith("shared") or \
            dst.buffer.scope != "global":
        what = f"`{value.buffer.name}` ({value.buffer.scope})" if isinstance(value, N.Region) else "a scalar"
        raise KernelError("tma-atomic-unsupported", f"T.atomic_add(..., use_tma=True) reduces a shared-memory tile "
                          f"into a global tensor, but the value is {what} and `{dst.buffer.name}` is "
                          f"{dst.buffer.scope}: stage the value in a T.alloc_shared tile, or drop use_tma=True", node)
    if dst.buffer.dtype not in TMA_ATOMIC_DTYPES:
        raise KernelError("tma-atomic-unsupported", f"TMA atomic add does not support dtype {dst.buffer.dtype} (of "
                          f"`{dst.buffer.name}`); the supported scalar dtypes are {', '.join(TMA_ATOMIC_DTYPES)}: "
                          "drop use_tma=True to add element by element", node)


def _region_or_value(p, vnode):
    if isinstance(vnode, ast.Subscript):
        base = p.ev.eval(vnode.value)
        if isinstance(base, N.Buffer):
            idx = vnode.slice.elts if isinstance(vnode.slice, ast.Tuple) else [vnode.slice]
            if any(isinstance(i, ast.Slice) for i in idx):
                return region_of(p, vnode)
            return None
    v = p.ev.eval(vnode)
    if isinstance(v, N.Buffer) and v.scope != "local.var":
        return value_region(v, p.span(vnode))
    return v if isinstance(v, N.Region) else None


def h_annotate_layout(p, b, node, short):
    """T.annotate_layout({buffer: layout, ...})."""
    mapping = b.get("layout_map")
    if not isinstance(mapping, ast.Dict):
        v = arg(p, b, "layout_map")
        if isinstance(v, dict):
            entries = tuple((k, LayoutSpec_unknown(p.span(node))) for k in v if isinstance(k, N.Buffer))
            p.emit(N.AnnotateLayout(entries, p.span(node)))
            return
        raise KernelError("bad-arguments", "T.annotate_layout takes a dict literal {buffer: layout, ...}", node)
    entries = []
    for k, v in zip(mapping.keys, mapping.values):
        buf = p.ev.eval(k) if k is not None else None
        if not isinstance(buf, N.Buffer):
            raise KernelError("bad-arguments", f"T.annotate_layout keys must be buffers (got `{src_text(k)}`)", k)
        entries.append((buf, layout_spec(p, v)))
    p.emit(N.AnnotateLayout(tuple(entries), p.span(node)))


def LayoutSpec_unknown(span):  # noqa: N802 - reads like the node it builds
    """An opaque layout (a value the frontend cannot see into)."""
    return N.LayoutSpec("unknown", None, span)


def layout_spec(p, node) -> N.LayoutSpec:
    """Describe a layout expression: a T.Layout / T.Fragment call without evaluating its index function, or a name
    bound to a layout the running program built on the host (evaluated there)."""
    span = p.span(node)
    if isinstance(node, ast.Name):
        live = p.ev.eval(node)
        return host_layout_spec(live, span) if isinstance(live, LiveLayout) else N.LayoutSpec("unknown", None, span)
    if not isinstance(node, ast.Call):
        return N.LayoutSpec("unknown", None, span)
    ref = p.ev.eval(node.func)
    short = ref.short if isinstance(ref, BuiltinRef) else getattr(node.func, "attr", getattr(node.func, "id", ""))
    if short in ("Layout", "Fragment"):
        shape_node = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
        shape = shape_ints(shape_of(p, p.ev.eval(shape_node), shape_node)) if shape_node is not None else None
        if short == "Layout":
            return N.LayoutSpec("layout", shape, span)
        fn = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords
                                                            if k.arg == "forward_fn"), None)
        return N.LayoutSpec("fragment", shape, span, fragment_threads(p, fn, shape))
    if "swizzle" in short:
        return N.LayoutSpec("swizzled", None, span)
    if "linear" in short:
        return N.LayoutSpec("linear", None, span)
    return N.LayoutSpec("unknown", None, span)


def h_use_swizzle(p, b, node, short):
    """T.use_swizzle(panel_size, order='row', enable=True)."""
    order = arg(p, b, "order")
    panel = const_int(p, b, "panel_size", "panel_size")
    if panel is None:
        return
    p.emit(N.UseSwizzle(panel, order if isinstance(order, str) else "row",
                        const_bool(p, b, "enable", "enable"), p.span(node)))
