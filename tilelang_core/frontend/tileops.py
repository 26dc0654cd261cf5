"""Builtin calls inside a kernel: allocations, tile ops (copy, gemm, fill, reduce, cumsum, atomic_add,
layouts, swizzle) and scalar intrinsics, each turned into tile IR by one small handler.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_const, as_int, shape_ints
from .expr_info import expr_dtype
from .kernel_errors import ON_CHIP_MAX, KernelError, check_elements, check_value
from .regions import region_of, value_region
from .allreduce import ALLREDUCE_HANDLERS
from .externs import EXTERN_HANDLERS
from .im2col import IM2COL_HANDLERS
from .gemm_sp import decompress as decompress_sparse
from .rng import RNG_HANDLERS
from .intrinsics import INTRINSIC_HANDLERS
from .threadops import THREAD_HANDLERS
from .values import BuiltinRef, EnumValue, TensorSpec, Unknown, normalize_dtype, to_expr

_MATH = {"exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "abs", "floor", "ceil", "round",
         "trunc", "tanh", "sigmoid", "sin", "cos", "tan", "erf", "pow", "max", "min", "fmod", "clamp", "ceildiv",
         "floordiv", "floormod", "truncdiv", "truncmod", "shift_left", "shift_right", "bitwise_and", "bitwise_or",
         "bitwise_xor", "isnan", "isinf", "isfinite", "popcount", "nearbyint", "atan", "atan2", "asin", "acos",
         "sinh", "cosh", "exp2f", "fast_exp", "__exp", "__exp10", "__log", "__log2", "__log10", "__tan", "__cos",
         "__sin", "ieee_add", "ieee_sub", "ieee_mul", "ieee_fmaf", "ieee_frcp", "ieee_fsqrt", "ieee_frsqrt",
         "ieee_fdiv", "hypot", "copysign", "nextafter", "ldexp", "reinterpret", "likely"}
_REDUCE = {"reduce_max": "max", "reduce_min": "min", "reduce_sum": "sum", "reduce_abssum": "abssum",
           "reduce_absmax": "absmax"}


def arg(p, b: dict, name: str):
    """The evaluated value of a bound argument (defaults are returned as they are)."""
    v = b.get(name)
    return p.ev.eval(v) if isinstance(v, ast.AST) else v


def const_int(p, b: dict, name: str, what: str) -> int | None:
    """A bound argument that must be a compile-time int (None when it depends on unknown factory values)."""
    v = arg(p, b, name)
    if v is None or depends_on_unknown(v):
        return None
    n = v if isinstance(v, int) and not isinstance(v, bool) else as_int(v) if to_expr(v) is not None else None
    if n is None:
        raise KernelError("bad-arguments", f"{what} must be a compile-time integer (got `{_src(b.get(name))}`)",
                          b.get(name) if isinstance(b.get(name), ast.AST) else None)
    return n


def const_bool(p, b: dict, name: str, what: str) -> bool:
    """A bound argument that must be a compile-time bool."""
    v = arg(p, b, name)
    if isinstance(v, (bool, int)) or v is None or depends_on_unknown(v):
        return bool(v) if not depends_on_unknown(v) else False
    c = as_int(v) if to_expr(v) is not None else None
    if c is None:
        raise KernelError("bad-arguments", f"{what} must be True or False at compile time", b.get(name))
    return bool(c)


def depends_on_unknown(v) -> bool:
    """True when a value is (or is built from) something the frontend could not evaluate."""
    from ..ir.visitor import walk

    if isinstance(v, Unknown):
        return True
    if isinstance(v, N.Var):
        return v.kind == "symbolic"
    if isinstance(v, (N.BinOp, N.Call, N.UnaryOp, N.Cast, N.Select, N.Compare, N.BoolOp)):
        return any(isinstance(n, N.Var) and n.kind == "symbolic" for n in walk(v))
    return False


def shape_of(p, value, node) -> tuple:
    """A shape argument (int, expr, tuple or list of them) as a tuple of IR expressions."""
    dims = value if isinstance(value, (tuple, list)) else (value,)
    out = []
    for d in dims:
        if d is None:
            d = Unknown(_src(node))
        e = to_expr(p.ev.operand(d), p.span(node))
        if e is None:
            raise KernelError("bad-arguments", f"shape entries must be integers (got `{_src(node)}`)", node)
        if isinstance(d, float) or expr_dtype(e).startswith(("float", "bfloat")):
            shown = repr(d) if isinstance(d, float) else _src(node)
            raise KernelError("bad-arguments", f"shape entries must be integers, but one is {shown} in "
                              f"`{_src(node)}`; use `//` for integer division", node)
        out.append(check_value(e, node, f"a shape entry of `{_src(node)}`", minimum=0))  # unused buffers may be empty
    check_elements(f"`{_src(node)}`", out, node)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# allocation


def h_alloc(p, b, node, short):
    """T.alloc_shared / alloc_fragment / alloc_local: Allocate a named buffer."""
    default_scope = {"alloc_shared": "shared.dyn", "alloc_fragment": "local.fragment", "alloc_local": "local"}[short]
    shape = shape_of(p, arg(p, b, "shape"), b.get("shape"))
    dtype = _element_dtype(p.dtype_arg(b.get("dtype"), arg(p, b, "dtype")), b.get("dtype"))
    scope = arg(p, b, "scope") or default_scope
    scope = scope if isinstance(scope, str) else default_scope
    buf = N.Buffer(p.target_name or short, shape, dtype, scope, p.span(node))
    check_elements(f"`{_src(b.get('shape'))}`", shape, b.get("shape"), ON_CHIP_MAX)
    p.emit(N.Allocate(buf, None, p.span(node)))
    return buf


def _element_dtype(dtype: str, node) -> str:
    """An on-chip buffer's element dtype: `handle` (T.ptr) only makes sense for global pointer tables."""
    if dtype == "handle":
        raise KernelError("invalid-dtype", f"`{_src(node)}` is `handle`, an opaque pointer: shared, fragment and "
                          "local buffers need an element dtype such as T.float16 or T.float32", node)
    return dtype


_OTHER_ALLOCS = {"alloc_reducer": "local.fragment", "alloc_global": "global", "alloc_buffer": "global",
                 "alloc_tmem": "shared.tmem"}


def h_alloc_other(p, b, node, short):
    """alloc_reducer / alloc_global / alloc_buffer / alloc_tmem: a buffer with the matching scope."""
    args, kwargs = p.ev.call_args(node)
    shape = args[0] if args else kwargs.get("shape", (1,))
    dtype_val = args[1] if len(args) > 1 else kwargs.get("dtype", "float32")
    dtype_node = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "dtype"), None)
    scope = kwargs.get("scope") if isinstance(kwargs.get("scope"), str) else _OTHER_ALLOCS[short]
    buf = N.Buffer(p.target_name or short, shape_of(p, shape, node), p.dtype_arg(dtype_node, dtype_val), scope,
                   p.span(node))
    p.emit(N.Allocate(buf, None, p.span(node)))
    return buf


def h_opaque(p, b, node, short):
    """Builtins whose value the checks do not model (barriers, descriptors): evaluated for errors only."""
    p.ev.call_args(node)
    return Unknown(f"T.{short}")


def h_alloc_var(p, b, node, short):
    """T.alloc_var(dtype, init=...): a one-element thread-local scalar."""
    dtype = p.dtype_arg(b.get("dtype"), arg(p, b, "dtype"))
    extra = b.get("args") or []
    init_node = b.get("init") if isinstance(b.get("init"), ast.AST) else (extra[0] if extra else None)
    init = p.ev.scalar(init_node) if init_node is not None else None
    buf = N.Buffer(p.target_name or "var", (N.Const(1),), dtype, "local.var", p.span(node))
    p.emit(N.Allocate(buf, init, p.span(node)))
    return buf


# ---------------------------------------------------------------------------------------------
# tile ops


def h_copy(p, b, node, short):
    """T.copy(src, dst)."""
    p.emit(N.Copy(region_of(p, b["src"]), region_of(p, b["dst"]), p.span(node)))


def h_gemm(p, b, node, short):
    """T.gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum); T.wgmma_gemm too (lowered as a gemm that
    waits for its own wgmma group, so T.wait_wgmma has nothing left to wait for)."""
    p.emit(N.Gemm(region_of(p, b["A"]), region_of(p, b["B"]), region_of(p, b["C"]),
                  const_bool(p, b, "transpose_A", "transpose_A"), const_bool(p, b, "transpose_B", "transpose_B"),
                  _policy(p, b), _clear_accum(p, b), p.span(node)))


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
    p.emit(N.Reduce(_REDUCE[short], src, dst, norm, clear, dim, p.span(node)))


def h_cumsum(p, b, node, short):
    """T.cumsum(src, dst=None, dim=0, reverse=False)."""
    src = region_of(p, b["src"])
    dst = region_of(p, b["dst"]) if isinstance(b.get("dst"), ast.AST) else src
    dim = const_int(p, b, "dim", "the `dim` of T.cumsum")
    if dim is None:
        return
    p.emit(N.CumSum(src, dst, dim, const_bool(p, b, "reverse", "reverse"), p.span(node)))


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
    p.emit(N.AtomicAdd(dst, value, p.span(node)))


def h_atomic_minmax(p, b, node, short):
    """T.atomic_max / T.atomic_min(dst_element, value): an atomic call on one element (value converted to its dtype)."""
    dst = region_of(p, b["dst"])
    if dst.kind != "point" or const_bool(p, b, "return_prev", "return_prev"):
        raise KernelError("bad-arguments", f"T.{short} takes one element (`buf[i, j]`) and a value here; the tile "
                          "form and return_prev are not supported yet", node)
    old = N.Load(dst.buffer, tuple(a.start for a in dst.axes), dst.span)
    p.emit(N.Evaluate(N.Call(short, (old, p.ev.scalar(b["value"])), dst.buffer.dtype, p.span(node)), p.span(node)))


ATOMIC_MINMAX = ("atomic_max", "atomic_min")


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
            raise KernelError("bad-arguments", f"T.annotate_layout keys must be buffers (got `{_src(k)}`)", k)
        entries.append((buf, layout_spec(p, v)))
    p.emit(N.AnnotateLayout(tuple(entries), p.span(node)))


def LayoutSpec_unknown(span):  # noqa: N802 - reads like the node it builds
    """An opaque layout (a value the frontend cannot see into)."""
    return N.LayoutSpec("unknown", None, span)


def layout_spec(p, node) -> N.LayoutSpec:
    """Describe a layout expression without evaluating its index function."""
    span = p.span(node)
    if isinstance(node, ast.Call):
        ref = p.ev.eval(node.func)
        short = ref.short if isinstance(ref, BuiltinRef) else getattr(node.func, "attr", getattr(node.func, "id", ""))
        if short in ("Layout", "Fragment"):
            shape_node = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
            shape = shape_ints(shape_of(p, p.ev.eval(shape_node), shape_node)) if shape_node is not None else None
            return N.LayoutSpec("layout" if short == "Layout" else "fragment", shape, span)
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


# ---------------------------------------------------------------------------------------------
# scalar intrinsics


def h_math(p, b, node, short):
    """T.exp/T.max/... : a scalar intrinsic Call (a dtype argument, as in T.reinterpret, sets the result type)."""
    args, dtype = [], None
    for a in node.args:
        v = p.ev.eval(a)
        if isinstance(v, str):  # a dtype (T.reinterpret) sets the result type; other strings are modes
            dtype = normalize_dtype(v) or dtype
            continue
        args.append(p.ev.scalar_value(v, a))
    _check_arity(short, len(args), node)
    if short in _DIVISIONS and len(args) == 2 and as_const(args[1]) == 0:
        raise KernelError("invalid-value", f"`{_src(node)}` divides by zero", node)
    if short == "ceildiv" and len(args) == 2:
        a, c = as_int(args[0]), as_int(args[1])
        if a is not None and c:
            return -(-a // c)
    dtype = dtype or (expr_dtype(args[0]) if args else None)
    return N.Call(short, tuple(args), dtype, p.span(node))


_DIVISIONS = ("ceildiv", "floordiv", "floormod", "truncdiv", "truncmod", "fmod")


def _check_arity(short: str, given: int, node) -> None:
    """A scalar intrinsic called with fewer or more value arguments than its catalog entry takes."""
    from .signatures import registry_entry

    entry = registry_entry(f"T.{short}")
    params = [q for q in getattr(entry, "params", ()) if q.kind == "expr"]
    if entry is None or not params or any(q.variadic for q in params):
        return
    required = sum(1 for q in params if q.required)
    if required <= given <= len(params):
        return
    names = ", ".join(q.name for q in params)
    raise KernelError("bad-arguments", f"`T.{short}` takes {len(params)} value argument"
                      f"{'s' if len(params) != 1 else ''} ({names}) but this call passes {given}", node)


def h_Cast(p, b, node, short):  # noqa: N802 - TIR spelling T.Cast(dtype, value)
    """T.Cast(dtype, value): the TIR-style cast."""
    if len(node.args) < 2:
        raise KernelError("bad-arguments", "T.Cast takes (dtype, value)", node)
    return p.cast_to(p.dtype_arg(node.args[0], p.ev.eval(node.args[0])), node, node.args[1])


def h_make_tensor(p, b, node, short):
    """T.make_tensor(ptr, shape, dtype): a global tensor over a pointer (`ptrs[i]` of a T.ptr tensor, bound here
    to a handle Var, so that later writes to `i` do not move the tensor)."""
    args, kwargs = p.ev.call_args(node)
    ptr = args[0] if args else kwargs.get("ptr")
    shape = args[1] if len(args) > 1 else kwargs.get("shape", ())
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype", "float32")
    dnode = node.args[2] if len(node.args) > 2 else None
    name, data = p.target_name or "tensor", None
    if isinstance(ptr, (N.Load, N.Var, N.Call, N.Cast, N.BinOp)):
        data = N.Var(f"{name}_data", "handle", "let", p.span(node))
        p.emit(N.LetStmt(data, ptr, p.span(node)))
    return N.Buffer(name, shape_of(p, shape, node), p.dtype_arg(dnode, dtype), "global", p.span(node), data=data)


def h_if_then_else(p, b, node, short):
    """T.if_then_else(cond, a, b)."""
    cond = p.ev.scalar(b["cond"])
    return N.Select(cond, p.ev.scalar(b["true_value"]), p.ev.scalar(b["false_value"]), p.span(node))


def h_cast(p, b, node, short):
    """T.cast(value, dtype)."""
    return p.cast_to(p.dtype_arg(b.get("dtype"), arg(p, b, "dtype")), node, b["value"])


def h_typed_const(p, b, node, short):
    """T.infinity/max_value/min_value(dtype)."""
    dtype = p.dtype_arg(b.get("dtype"), arg(p, b, "dtype"))
    return N.Call(short, (), dtype, p.span(node))


def h_tensor(p, b, node, short):
    """T.Tensor(shape, dtype) is a tensor type; with a data pointer (`T.Tensor(shape, dtype, A.data)`) a view."""
    from .consteval import call_builtin_const

    args, kwargs = p.ev.call_args(node)
    spec = call_builtin_const(BuiltinRef("T." + short), args, kwargs, "T.Tensor")
    if (len(args) >= 3 or "data" in kwargs) and isinstance(spec, TensorSpec):
        data = args[2] if len(args) >= 3 else kwargs.get("data")
        base = data if isinstance(data, N.Buffer) else None  # `A.data` evaluates to A
        return N.Buffer(p.target_name or "view", shape_of(p, spec.shape, node), spec.dtype,
                        base.scope if base is not None else "global", p.span(node), base)
    return spec


def h_const_value(p, b, node, short):
    """T.const("M, N") (eager dims) and T.dynamic/T.symbolic("m"): their compile-time values."""
    from .consteval import call_builtin_const

    args, kwargs = p.ev.call_args(node)
    return call_builtin_const(BuiltinRef("T." + short), args, kwargs, f"T.{short}")


def h_reshape(p, b, node, short):
    """T.reshape(src, shape) / T.view(src, shape=None, dtype=None): the same storage with a new shape."""
    args, kwargs = p.ev.call_args(node)
    src = args[0] if args else kwargs.get("src")
    if not isinstance(src, N.Buffer):
        return Unknown(f"T.{short}")
    shape = args[1] if len(args) > 1 else kwargs.get("shape")
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
    new_shape = shape_of(p, shape, node) if shape is not None else src.shape
    new_dtype = p.dtype_arg(None, dtype) if dtype is not None else src.dtype
    return N.Buffer(p.target_name or src.name, new_shape, new_dtype, src.scope, p.span(node), src)


def h_empty(p, b, node, short):
    """Eager style `C = T.empty((M, N), dtype)`: an output tensor of the kernel."""
    args, kwargs = p.ev.call_args(node)
    dtype_node = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    if args and isinstance(args[0], (tuple, list)):
        shape = args[0]
        if len(args) > 1:
            kwargs["dtype"], dtype_node = args[1], node.args[1]
    else:
        shape = tuple(a for a in args if not isinstance(a, str))
    dtype = p.dtype_arg(dtype_node, kwargs.get("dtype", "float32"))
    buf = N.Buffer(p.target_name or "out", shape_of(p, shape, node), dtype, "global", p.span(node))
    p.eager_outputs.append(buf)
    return buf


def h_loop_call(p, b, node, short):
    """Loop builtins outside a `for` header."""
    raise KernelError("bad-arguments", f"T.{short}(...) is a loop range; use it as `for i in T.{short}(...):`", node)


def h_kernel_call(p, b, node, short):
    """T.Kernel outside a `with` header."""
    raise KernelError("invalid-kernel", "T.Kernel(...) opens the launch; write `with T.Kernel(grid..., threads=128) "
                      "as (bx, by):`", node)


HANDLERS = {
    "alloc_shared": h_alloc, "alloc_fragment": h_alloc, "alloc_local": h_alloc, "alloc_var": h_alloc_var,
    "copy": h_copy, "gemm": h_gemm, "gemm_v1": h_gemm, "gemm_v2": h_gemm, "wgmma_gemm": h_gemm, "gemm_sp": h_gemm_sp, "clear": h_fill, "fill": h_fill,
    "cumsum": h_cumsum, "atomic_add": h_atomic_add, "annotate_layout": h_annotate_layout,
    "atomic_max": h_atomic_minmax, "atomic_min": h_atomic_minmax,
    "use_swizzle": h_use_swizzle, "if_then_else": h_if_then_else, "cast": h_cast,
    "infinity": h_typed_const, "max_value": h_typed_const, "min_value": h_typed_const,
    **{name: h_alloc_other for name in _OTHER_ALLOCS},
    **{name: h_opaque for name in ("alloc_barrier", "alloc_cluster_barrier", "alloc_descriptor", "alloc_smem")},
    "const": h_const_value, "dynamic": h_const_value, "symbolic": h_const_value, "Cast": h_Cast, "make_tensor": h_make_tensor, "reshape": h_reshape, "view": h_reshape, "Tensor": h_tensor, "Buffer": h_tensor, "empty": h_empty,
    "Pipelined": h_loop_call, "Parallel": h_loop_call, "serial": h_loop_call, "unroll": h_loop_call,
    "vectorized": h_loop_call, "grid": h_loop_call, "Kernel": h_kernel_call,
    **{name: h_reduce for name in _REDUCE}, **{name: h_math for name in _MATH}, **THREAD_HANDLERS,
    **INTRINSIC_HANDLERS, **EXTERN_HANDLERS, **IM2COL_HANDLERS, **ALLREDUCE_HANDLERS, **RNG_HANDLERS,
}
NO_BIND = set(THREAD_HANDLERS) | set(INTRINSIC_HANDLERS) | set(EXTERN_HANDLERS) | set(IM2COL_HANDLERS) | set(ALLREDUCE_HANDLERS) | set(RNG_HANDLERS) | {name for name in _MATH} | {"const", "dynamic", "symbolic", "Cast", "make_tensor", "empty", "Tensor", "Buffer", "reshape", "view", "alloc_barrier", "alloc_cluster_barrier",
                                      "alloc_descriptor", "alloc_smem"} | set(_OTHER_ALLOCS)


def _src(node) -> str:
    try:
        return ast.unparse(node) if isinstance(node, ast.AST) else repr(node)
    except Exception:  # noqa: BLE001
        return "?"


__all__ = ["HANDLERS", "NO_BIND", "arg", "const_int", "const_bool", "shape_of", "layout_spec"]
