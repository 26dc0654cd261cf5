"""The catalog of TileLang builtins: every `T.*` / `tilelang.*` construct with its parameters as in TileLang 0.1.15.

Parameter names, order, kinds and defaults follow `inspect.signature` of the 0.1.15 wheel; the hover
text of each entry lives in `catalog_docs.py` (per parameter: `catalog_param_docs.py`) and is attached here by name.
"""
from __future__ import annotations

from .catalog_build import KW as _KW
from .catalog_build import entry as _b
from .catalog_intrinsics import INTRINSICS
from .builtin import Builtin, Param

_ANN = ("annotations", "any", None)

# --- kernel structure --------------------------------------------------------------------------------
_KERNEL = [
    _b("T.prim_func", "kernel", ("func", "any", None), _KW, ("eager_jit", "bool", False),
       returns="PrimFunc", kind="decorator"),
    _b("T.macro", "kernel", ("func", "any", None), returns="Macro", kind="decorator", aliases=("T.inline",)),
    _b("T.Kernel", "kernel", ("*blocks", "varargs"), ("threads", "any", 128), ("prelude", "str", None),
       ("cluster_dims", "any", None), returns="KernelLaunchFrame", kind="context"),
    _b("T.CUDASourceCodeKernel", "kernel", ("*blocks", "varargs"), ("threads", "any", None), _KW,
       ("source_code_or_path", "any"), ("entry_name", "str", "main_kernel"), ("cluster_dims", "any", None),
       ("prelude", "str", None)),
    _b("T.get_thread_binding", "kernel", ("dim", "int", 0), returns="Var"),
    _b("T.get_block_binding", "kernel", ("dim", "int", 0), returns="Var"),
    _b("T.sync_threads", "kernel", ("barrier_id", "int", None), ("arrive_count", "int", None)),
]

# --- buffer types and symbolic dimensions ---------------------------------------------------------------
_TYPES = [
    _b("T.Tensor", "type", ("shape", "shape"), ("dtype", "dtype", "float32"), ("data", "any", None),
       ("scope", "str", None), returns="Buffer", kind="type"),
    _b("T.Buffer", "type", ("shape", "shape"), ("dtype", "dtype", "float32"), ("data", "any", None),
       ("strides", "shape", None), ("elem_offset", "expr", None), ("scope", "str", "global"),
       ("align", "int", 0), ("offset_factor", "int", 0), ("buffer_type", "str", ""),
       ("axis_separators", "any", None), returns="Buffer", kind="type"),
    *[_b(f"T.{n}Buffer", "type", ("shape", "shape"), ("dtype", "dtype", "float32"), ("data", "any", None),
         ("strides", "shape", None), ("elem_offset", "expr", None), ("scope", "str", None), ("align", "int", None),
         ("offset_factor", "int", None), ("buffer_type", "str", ""), ("axis_separators", "any", None),
         returns="Buffer", kind="type") for n in ("Shared", "Fragment", "Local")],
    _b("T.StridedTensor", "type", ("shape", "shape"), ("strides", "shape"), ("dtype", "dtype", "float32"),
       ("scope", "str", None), _KW, ("data", "any", None), returns="Buffer", kind="type"),
    _b("T.dynamic", "type", ("name", "str"), ("dtype", "dtype", "int32"), returns="Var", aliases=("T.symbolic",)),
    _b("T.const", "type", ("name", "str"), ("dtype", "dtype", "int32"), returns="Var | tuple[Var, ...]"),
    _b("T.let", "type", ("v", "expr"), ("value", "expr"), ("body", "expr", None)),
    _b("T.empty", "type", ("*shape", "varargs"), ("dtype", "dtype", "float32"), returns="Tensor"),
    _b("T.dtype", "type", ("value", "any"), returns="dtype"),
]

# --- memory ----------------------------------------------------------------------------------------------
_MEMORY = [
    _b("T.alloc_shared", "memory", ("shape", "shape"), ("dtype", "dtype"), ("scope", "str", "shared.dyn"),
       returns="Buffer"),
    _b("T.alloc_fragment", "memory", ("shape", "shape"), ("dtype", "dtype"), ("scope", "str", "local.fragment"),
       returns="Buffer"),
    _b("T.alloc_local", "memory", ("shape", "shape"), ("dtype", "dtype"), ("scope", "str", "local"),
       returns="Buffer"),
    _b("T.alloc_var", "memory", ("dtype", "dtype"), ("*args", "varargs"), ("scope", "str", "local.var"),
       ("init", "expr", None), returns="Buffer"),
    _b("T.alloc_global", "memory", ("shape", "shape"), ("dtype", "dtype"), ("scope", "str", "global"),
       returns="Buffer"),
    _b("T.alloc_barrier", "memory", ("arrive_count", "any"), returns="Buffer"),
    _b("T.alloc_reducer", "memory", ("shape", "shape"), ("dtype", "dtype"), ("op", "str", "sum"),
       ("replication", "str", None), returns="Buffer"),
    _b("T.view", "memory", ("src", "buffer"), ("shape", "shape", None), ("dtype", "dtype", None),
       ("strides", "shape", None), returns="Buffer"),
    _b("T.reshape", "memory", ("src", "buffer"), ("shape", "shape"), returns="Buffer"),
]

# --- loops -----------------------------------------------------------------------------------------------
_LOOPS = [
    _b("T.Pipelined", "loop", ("start", "expr"), ("stop", "expr", None), ("num_stages", "int", 0),
       ("order", "any", None), ("stage", "any", None), _ANN, kind="iterator"),
    _b("T.Parallel", "loop", ("*extents", "varargs"), ("coalesced_width", "int", None),
       ("loop_layout", "any", None), ("prefer_async", "bool", None), _ANN, kind="iterator"),
    _b("T.serial", "loop", ("start", "expr"), ("stop", "expr", None), ("step", "expr", None), _KW, _ANN,
       kind="iterator"),
    _b("T.unroll", "loop", ("start", "expr"), ("stop", "expr", None), ("step", "expr", None), _KW,
       ("explicit", "bool", False), ("unroll_factor", "int", None), _ANN, kind="iterator"),
    _b("T.vectorized", "loop", ("start", "expr"), ("stop", "expr", None), _KW, _ANN, kind="iterator"),
    _b("T.grid", "loop", ("*extents", "varargs"), kind="iterator"),
    _b("T.Persistent", "loop", ("domain", "any"), ("wave_size", "expr"), ("index", "expr"),
       ("group_size", "expr", 8), ("num_stages", "int", 0), _KW, _ANN, kind="iterator"),
]

# --- tile operations -------------------------------------------------------------------------------------
_REDUCE = ("buffer", "region"), ("out", "region"), ("dim", "int", -1)
_TILE_OPS = [
    _b("T.copy", "tile-op", ("src", "region"), ("dst", "region"), _KW, ("coalesced_width", "int", None),
       ("disable_tma", "bool", False), ("eviction_policy", "str", None), ("prefer_instruction", "str", None),
       _ANN, ("loop_layout", "any", None)),
    _b("T.gemm", "tile-op", ("A", "region"), ("B", "region"), ("C", "region"), ("transpose_A", "bool", False),
       ("transpose_B", "bool", False), ("policy", "any", "T.GemmWarpPolicy.Square"),
       ("clear_accum", "bool", False), ("mbar", "any", None), _ANN),
    _b("T.clear", "tile-op", ("buffer", "region"), _ANN),
    _b("T.fill", "tile-op", ("buffer", "region"), ("value", "expr"), _ANN),
    _b("T.reduce_max", "tile-op", *_REDUCE, ("clear", "bool", True), ("batch", "int", 1),
       ("nan_propagate", "bool", False), _ANN),
    _b("T.reduce_min", "tile-op", *_REDUCE, ("clear", "bool", True), ("batch", "int", 1),
       ("nan_propagate", "bool", False), _ANN),
    _b("T.reduce_sum", "tile-op", *_REDUCE, ("clear", "bool", True), ("batch", "int", 1), _ANN),
    _b("T.reduce_abssum", "tile-op", *_REDUCE, ("batch", "int", 1), _ANN),
    _b("T.reduce_absmax", "tile-op", *_REDUCE, ("clear", "bool", True), ("batch", "int", 1),
       ("nan_propagate", "bool", False), _ANN),
    _b("T.cumsum", "tile-op", ("src", "region"), ("dst", "region", None), ("dim", "int", 0),
       ("reverse", "bool", False), _ANN),
    _b("T.atomic_add", "tile-op", ("dst", "region"), ("value", "any"), ("memory_order", "str", None),
       ("return_prev", "bool", False), ("use_tma", "bool", False), _ANN),
    _b("T.atomic_max", "tile-op", ("dst", "region"), ("value", "any"), ("memory_order", "str", None),
       ("return_prev", "bool", False), _ANN),
    _b("T.atomic_min", "tile-op", ("dst", "region"), ("value", "any"), ("memory_order", "str", None),
       ("return_prev", "bool", False), _ANN),
]

# --- layouts and scheduling hints ------------------------------------------------------------------------
_LAYOUT = [
    _b("T.annotate_layout", "layout", ("layout_map", "layout_map")),
    _b("T.Layout", "layout", ("shape", "shape"), ("forward_fn", "any"), returns="Layout", kind="type",
       aliases=("tilelang.layout.Layout",)),
    _b("T.Fragment", "layout", ("shape", "shape"), ("forward_fn", "any", None), ("forward_thread_fn", "any", None),
       ("replicate", "int", 1), ("forward_index_fn", "any", None), returns="Fragment", kind="type",
       aliases=("tilelang.layout.Fragment",)),
    _b("T.use_swizzle", "layout", ("panel_size", "int"), ("order", "str", "row"), ("enable", "bool", True)),
    _b("tilelang.layout.make_swizzled_layout", "layout", ("buffer", "buffer"), ("k_major", "bool", True),
       ("allow_pad", "bool", True), returns="Layout"),
    *[_b(f"tilelang.layout.make_{n}_swizzled_layout", "layout", ("buffer", "buffer"), returns="Layout")
      for n in ("full_bank", "half_bank", "quarter_bank")],
    *[_b(f"tilelang.layout.make_{n}_swizzled_layout", "layout", ("buffer", "buffer"), ("continuity", "int", None),
         ("k_major", "bool", True), returns="Layout") for n in ("wgmma", "tcgen05mma")],
    _b("tilelang.layout.make_volta_swizzled_layout", "layout", ("buffer", "buffer"), ("is_a", "bool", True),
       ("k_inner", "bool", True), returns="Layout"),
    _b("tilelang.layout.make_linear_layout", "layout", ("buffer_or_load_or_region", "region"), returns="Layout"),
    _b("tilelang.layout.make_fully_replicated_layout_fragment", "layout", ("buffer", "buffer"), ("threads", "int"),
       returns="Fragment"),
    _b("T.GemmWarpPolicy", "layout", kind="enum"),
    _b("T.GemmWarpPolicy.Square", "layout", kind="constant"),
    _b("T.GemmWarpPolicy.FullRow", "layout", kind="constant"),
    _b("T.GemmWarpPolicy.FullCol", "layout", kind="constant"),
]

# --- scalar math -----------------------------------------------------------------------------------------
_UNARY = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "tanh", "floor", "ceil", "sigmoid", "sin",
          "cos", "log1p", "exp10", "trunc", "erf", "isnan", "isinf", "isfinite", "sinh", "cosh", "asin", "acos",
          "atan", "nearbyint", "__exp", "__exp2", "__exp10", "__log", "__log2", "__log10", "__sin", "__cos", "__tan")
_BINARY_MATH = ("fmod", "atan2", "hypot", "copysign", "nextafter")
_MATH = [
    _b("T.ceildiv", "math", ("lhs", "expr"), ("rhs", "expr")),
    _b("T.max", "math", ("a", "expr"), ("b", "expr")),
    _b("T.min", "math", ("a", "expr"), ("b", "expr")),
    *[_b(f"T.{n}", "math", ("x", "expr")) for n in _UNARY],
    *[_b(f"T.{n}", "math", ("x", "expr"), ("y", "expr")) for n in _BINARY_MATH],
    _b("T.round", "math", ("x", "expr"), ("rounding_mode", "str", "ties-to-even")),
    _b("T.pow", "math", ("x", "expr"), ("y", "expr")),
    _b("T.if_then_else", "math", ("cond", "expr"), ("t", "expr"), ("f", "expr")),
    _b("T.cast", "math", ("value", "expr"), ("dtype", "dtype"), ("round", "str", ""), ("sat", "bool", True),
       ("rbits", "expr", None)),
    _b("T.infinity", "math", ("dtype", "dtype")),
    _b("T.max_value", "math", ("dtype", "dtype")),
    _b("T.min_value", "math", ("dtype", "dtype")),
    _b("T.clamp", "math", ("dst", "expr"), ("min_val", "expr"), ("max_val", "expr")),
    _b("T.floordiv", "math", ("a", "expr"), ("b", "expr")),
    _b("T.floormod", "math", ("a", "expr"), ("b", "expr")),
]

# --- debugging -------------------------------------------------------------------------------------------
_MISC = [
    _b("T.print", "misc", ("obj", "any", None), ("msg", "str", ""), ("warp_group_id", "int", 0),
       ("warp_id", "int", 0)),
    _b("T.device_assert", "misc", ("condition", "expr"), ("msg", "str", ""), ("no_stack_info", "bool", False)),
]

# --- the top-level tilelang package ----------------------------------------------------------------------
_JIT = [
    _b("tilelang.jit", "jit", ("func", "any", None), _KW, ("out_idx", "any", None), ("target", "any", None),
       ("target_host", "any", None), ("execution_backend", "str", None), ("verbose", "bool", None),
       ("pass_configs", "any", None), ("debug_root_path", "str", None), ("compile_flags", "any", None),
       returns="JITImpl", kind="decorator"),
    _b("tilelang.compile", "jit", ("func", "any", None), ("out_idx", "any", None), ("execution_backend", "str", None),
       ("target", "any", None), ("target_host", "any", None), ("verbose", "bool", None),
       ("pass_configs", "any", None), ("compile_flags", "any", None), returns="JITKernel"),
    _b("tilelang.lower", "jit", ("func_or_mod", "any"), ("target", "any", "auto"), ("target_host", "any", None),
       ("runtime_only", "bool", False), ("enable_host_codegen", "bool", False),
       ("enable_device_compile", "bool", False), returns="CompiledArtifact"),
]

# --- advanced (Hopper/Blackwell, warp-level, hints): signatures as in 0.1.15, short hover text --------------
_SQ = "T.GemmWarpPolicy.Square"
_ADVANCED = [
    _b("T.tma_copy", "tile-op", ("src", "region"), ("dst", "region"), _KW, ("barrier", "expr", None),
       ("cluster_mask", "any", None), ("leader_scope_threads", "any", None), ("eviction_policy", "str", None), _ANN),
    _b("T.async_copy", "tile-op", ("src", "region"), ("dst", "region"), _KW, ("coalesced_width", "int", None), _ANN,
       ("loop_layout", "any", None)),
    _b("T.transpose", "tile-op", ("src", "region"), ("dst", "region"), _ANN),
    _b("T.im2col", "tile-op", ("img", "buffer"), ("col", "buffer"), ("nhw_step", "expr"), ("c_step", "expr"),
       ("kernel", "int"), ("stride", "int"), ("dilation", "int"), ("pad", "int"), ("eviction_policy", "str", None),
       _ANN),
    _b("T.wgmma_gemm", "tile-op", ("A", "region"), ("B", "region"), ("C", "region"), ("transpose_A", "bool", False),
       ("transpose_B", "bool", False), ("policy", "any", _SQ), ("clear_accum", "bool", False), _ANN),
    _b("T.tcgen05_gemm", "tile-op", ("A", "region"), ("B", "region"), ("C", "region"), ("transpose_A", "bool", False),
       ("transpose_B", "bool", False), ("policy", "any", _SQ), ("clear_accum", "bool", False), _KW, ("mbar", "any"),
       ("use_2cta", "bool", False), _ANN),
    _b("T.gemm_sp", "tile-op", ("A_sparse", "region"), ("E", "region"), ("B", "region"), ("C", "region"),
       ("transpose_A", "bool", False), ("transpose_E", "bool", False), ("transpose_B", "bool", False),
       ("policy", "any", _SQ), ("clear_accum", "bool", False), ("wg_wait", "int", 0), _ANN),
    _b("T.cummax", "tile-op", ("src", "region"), ("dst", "region", None), ("dim", "int", 0),
       ("reverse", "bool", False), _ANN),
    *[_b(f"T.reduce_{op}", "tile-op", *_REDUCE, ("clear", "bool", True), ("batch", "int", 1), _ANN)
      for op in ("bitand", "bitor", "bitxor")],
    _b("T.finalize_reducer", "tile-op", ("reducer", "buffer"), ("dst", "region", None), ("batch", "int", 1), _ANN),
    _b("T.atomic_addx2", "tile-op", ("dst", "region"), ("value", "any"), ("return_prev", "bool", False)),
    _b("T.atomic_addx4", "tile-op", ("dst", "region"), ("value", "any"), ("return_prev", "bool", False)),
    _b("T.atomic_load", "tile-op", ("src", "region"), ("memory_order", "str", "seq_cst")),
    _b("T.atomic_store", "tile-op", ("dst", "region"), ("src", "any"), ("memory_order", "str", "seq_cst")),
    _b("T.dp4a", "math", ("A", "region"), ("B", "region"), ("C", "region")),
    _b("T.extract_lane", "math", ("value", "expr"), ("lane", "int")),
    _b("T.alloc_tmem", "memory", ("shape", "shape"), ("dtype", "dtype"), returns="Buffer"),
    _b("T.alloc_cluster_barrier", "memory", ("arrive_count", "any"), returns="Buffer"),
    _b("T.alloc_descriptor", "memory", ("kind", "str", "wgmma"), ("dtype", "dtype", "uint64"), returns="Buffer"),
    _b("T.access_ptr", "memory", ("base", "region"), ("access_type", "str", "r"), ("*extents", "varargs"),
       ("offset", "expr", 0), ("extent", "expr", None), ("ignore_last_ndim", "int", 0)),
    _b("T.reinterpret", "math", ("value", "expr"), ("dtype", "dtype")),
    _b("T.mbarrier_wait_parity", "kernel", ("mbarrier", "expr"), ("parity", "expr")),
    _b("T.mbarrier_arrive", "kernel", ("mbarrier", "expr"), ("cta_id", "expr", None)),
    _b("T.barrier_arrive", "kernel", ("mbarrier", "expr")),
    _b("T.barrier_wait", "kernel", ("mbarrier", "expr"), ("parity", "expr")),
    _b("T.fence_proxy_async", "kernel"),
    _b("T.wait_wgmma", "kernel", ("id", "int")),
    _b("T.set_max_nreg", "kernel", ("reg_count", "int"), ("is_inc", "int")),
    _b("T.inc_max_nreg", "kernel", ("reg_count", "int")),
    _b("T.dec_max_nreg", "kernel", ("reg_count", "int")),
    _b("T.no_set_max_nreg", "kernel"),
    _b("T.disable_warp_group_reg_alloc", "kernel"),
    _b("T.mbarrier_expect_tx", "kernel", ("mbarrier", "expr"), ("tx", "expr")),
    _b("T.mbarrier_arrive_expect_tx", "kernel", ("mbarrier", "expr"), ("tx", "expr")),
    _b("T.thread_binding", "kernel", ("start", "expr"), ("stop", "expr", None), ("thread", "str", None), _KW, _ANN,
       returns="Var"),
    _b("T.ws", "kernel", ("*warp_group_idx", "varargs"), kind="context", aliases=("T.WarpSpecialize",)),
    *[_b(f"T.ieee_{op}", "math", *[(x, "expr") for x in args], *([("rounding_mode", "str", "rn")] if mode else []))
      for op, args, mode in (("add", "xy", 1), ("sub", "xy", 1), ("mul", "xy", 1), ("fmaf", "xyz", 1),
                             ("frcp", "x", 1), ("fsqrt", "x", 1), ("frsqrt", "x", 0), ("fdiv", "xy", 1))],
    _b("T.sync_warp", "kernel", ("mask", "expr", None)),
    _b("T.sync_grid", "kernel"),
    _b("T.get_lane_idx", "kernel", ("warp_size", "int", None), returns="Var"),
    _b("T.get_warp_idx", "kernel", ("warp_size", "int", None), returns="Var"),
    _b("T.get_warp_group_idx", "kernel", ("warp_size", "int", None), ("warps_per_group", "int", None), returns="Var"),
    _b("T.get_warp_idx_sync", "kernel", ("warp_size", "int", None), returns="Var"),
    _b("T.shuffle_elect", "kernel", ("thread_extent", "int"), returns="bool"),
    _b("T.block_rank_in_cluster", "kernel", returns="Var"),
    _b("T.ClusterKernel", "kernel", ("*blocks", "varargs"), ("cluster_dims", "any"), ("threads", "any", None),
       ("prelude", "str", None), kind="context"),
    *[_b(f"T.shfl_{d}", "math", ("value", "expr"), ("delta", "expr"), ("width", "int", 32),
         ("mask", "expr", 0xFFFFFFFF)) for d in ("xor", "up", "down")],
    *[_b(f"T.warp_reduce_{op}", "math", ("value", "expr")) for op in ("sum", "max", "min", "bitand", "bitor")],
    _b("T.tan", "math", ("x", "expr")),
    _b("T.log10", "math", ("x", "expr")),
    _b("T.truncdiv", "math", ("a", "expr"), ("b", "expr")),
    _b("T.truncmod", "math", ("a", "expr"), ("b", "expr")),
    _b("T.Select", "math", ("condition", "expr"), ("true_value", "expr"), ("false_value", "expr")),
    _b("T.annotate_l2_hit_ratio", "layout", ("l2_hit_ratio_map", "any")),
    _b("T.annotate_safe_value", "layout", ("safe_value_map", "any")),
    _b("T.annotate_restrict_buffers", "layout", ("*buffers", "varargs")),
    _b("T.annotate_min_blocks_per_sm", "layout", ("n", "int")),
    _b("T.annotate_pass_configs", "misc", ("configs", "any")),
    _b("T.annotate_compile_flags", "misc", ("flags", "any")),
    _b("T.call_extern", "misc", ("dtype", "dtype"), ("func_name", "str"), ("*args", "varargs")),
    _b("T.assume", "misc", ("cond", "expr", None)),
    _b("T.loop_break", "misc"),
    _b("T.import_source", "misc", ("source", "str", None)),
]


def _dtype_entries() -> list[Builtin]:
    from .dtypes import DTYPES

    return [Builtin(f"T.{d.name}", "type", (Param("value", "expr", None),), returns=d.name, kind="dtype",
                    aliases=tuple(f"T.{a}" for a in d.attr_aliases), doc=_dtype_doc(d))
            for d in DTYPES.values()]


def _dtype_doc(d) -> str:
    """Hover text of a dtype: width, kind, torch counterpart, other spellings."""
    torch = f"; `torch.{d.torch}` at run time" if d.torch else ""
    also = ", ".join(f'"{a}"' for a in d.aliases)
    text = f"The `{d.name}` dtype: {d.bits}-bit {d.kind}{torch}. Also written `\"{d.name}\"`"
    text += f" or {also}." if also else "."
    return text + f"\n\n`T.{d.name}(x)` casts a scalar expression to it."


BUILTINS: list[Builtin] = (
    _KERNEL + _TYPES + _MEMORY + _LOOPS + _TILE_OPS + _LAYOUT + _MATH + _MISC + _JIT + _ADVANCED
    + INTRINSICS + _dtype_entries()
)
