"""The builtin catalog: complete, self-consistent, bindable, and documented."""
from __future__ import annotations

import pytest

from tilelang_core.language.catalog import BUILTINS
from tilelang_core.language.builtin import BindError, bind
from tilelang_core.language.registry import lookup, registry

REQUIRED_NAMES = """
T.prim_func T.macro T.Kernel T.Tensor T.Buffer T.StridedTensor T.alloc_shared T.alloc_fragment
T.alloc_local T.alloc_var T.Pipelined T.Parallel T.serial T.unroll T.vectorized T.grid T.copy T.gemm
T.GemmWarpPolicy T.clear T.fill T.reduce_max T.reduce_min T.reduce_sum T.reduce_abssum T.reduce_absmax
T.cumsum T.atomic_add T.annotate_layout T.Layout T.Fragment T.use_swizzle T.ceildiv T.max T.min T.exp
T.exp2 T.log T.log2 T.sqrt T.rsqrt T.abs T.tanh T.floor T.ceil T.if_then_else T.cast T.infinity T.max_value
T.min_value T.clamp T.dynamic T.symbolic T.const T.empty T.get_thread_binding T.sync_threads T.print
T.float16 T.bfloat16 T.float32 T.float64 T.float8_e4m3fn T.float8_e5m2 T.int8 T.int16 T.int32 T.int64
T.uint8 T.uint16 T.uint32 T.uint64 T.bool tilelang.jit tilelang.compile
tilelang.layout.make_swizzled_layout T.GemmWarpPolicy.Square T.GemmWarpPolicy.FullRow
T.GemmWarpPolicy.FullCol
""".split()  # noqa: SIM905
CATEGORIES = {"kernel", "memory", "loop", "tile-op", "math", "type", "layout", "jit", "misc"}
KINDS = {"function", "decorator", "context", "iterator", "type", "dtype", "constant", "enum"}
PARAM_KINDS = {"buffer", "region", "shape", "dtype", "int", "expr", "bool", "str", "layout_map", "any", "varargs"}


@pytest.mark.parametrize("name", REQUIRED_NAMES)
def test_required_name_present(name):
    assert lookup(name) is not None, name


def test_names_unique_and_well_formed():
    names = [b.name for b in BUILTINS]
    assert len(names) == len(set(names))
    for b in BUILTINS:
        assert b.name.startswith(("T.", "tilelang.")), b.name
        assert b.category in CATEGORIES, b
        assert b.kind in KINDS, b
        assert all(p.kind in PARAM_KINDS for p in b.params), b.name
        assert b.doc.strip(), f"{b.name} has no hover text"


@pytest.mark.parametrize("builtin", BUILTINS, ids=lambda b: b.name)
def test_every_entry_binds_its_own_defaults(builtin):
    sentinels = {p.name: object() for p in builtin.params if p.required}
    args = [sentinels[p.name] for p in builtin.params if p.required and not p.keyword_only]
    kwargs = {p.name: sentinels[p.name] for p in builtin.params if p.required and p.keyword_only}
    bound = bind(builtin, args, kwargs)
    for p in builtin.params:
        if p.variadic:
            assert bound[p.name] == []
        elif p.required:
            assert bound[p.name] is sentinels[p.name]
        else:
            assert bound[p.name] == p.default or bound[p.name] is p.default


def test_signature_rendering():
    assert lookup("T.copy").signature == (
        "T.copy(src, dst, *, coalesced_width=None, disable_tma=False, eviction_policy=None, "
        "prefer_instruction=None, annotations=None, loop_layout=None)")
    assert lookup("T.gemm").signature.startswith(
        "T.gemm(A, B, C, transpose_A=False, transpose_B=False, policy=T.GemmWarpPolicy.Square, clear_accum=False")
    assert lookup("T.Kernel").signature == (
        "T.Kernel(*blocks, threads=128, prelude=None, cluster_dims=None) -> KernelLaunchFrame")
    assert lookup("T.alloc_shared").signature == "T.alloc_shared(shape, dtype, scope='shared.dyn') -> Buffer"
    assert lookup("T.Pipelined").signature == (
        "T.Pipelined(start, stop=None, num_stages=0, order=None, stage=None, annotations=None)")


def test_tilelang_015_defaults():
    kernel = bind(lookup("T.Kernel"), [8, 8], {})
    assert kernel == {"blocks": [8, 8], "threads": 128, "prelude": None, "cluster_dims": None}
    red = bind(lookup("T.reduce_max"), ["x", "m"], {})
    assert red["dim"] == -1 and red["clear"] is True
    assert "clear" not in {p.name for p in lookup("T.reduce_abssum").params}
    pipe = bind(lookup("T.Pipelined"), [4], {"num_stages": 3})
    assert pipe["stop"] is None and pipe["num_stages"] == 3 and pipe["order"] is None
    assert bind(lookup("T.alloc_fragment"), [(4, 4), "float32"], {})["scope"] == "local.fragment"
    var = bind(lookup("T.alloc_var"), ["float32"], {"init": 0})
    assert var == {"dtype": "float32", "args": [], "scope": "local.var", "init": 0}


def test_keyword_only_and_removed_parameters_rejected():
    with pytest.raises(BindError, match="at most 2 positional"):
        bind(lookup("T.copy"), ["a", "b", 4], {})
    with pytest.raises(BindError, match="no parameter 'sync'"):  # removed in 0.1.15
        bind(lookup("T.Pipelined"), [4], {"sync": [[0, 1]]})
    with pytest.raises(BindError, match=r"no parameter 'transpose_b' \(did you mean 'transpose_"):
        bind(lookup("T.gemm"), ["a", "b", "c"], {"transpose_b": True})
    with pytest.raises(BindError, match="missing the argument 'dtype'"):
        bind(lookup("T.alloc_shared"), [(64, 64)], {})


def test_aliases_resolve_to_the_same_entry():
    assert lookup("T.symbolic") is lookup("T.dynamic")
    assert lookup("T.inline") is lookup("T.macro")
    assert lookup("T.half") is lookup("T.float16")
    assert lookup("tilelang.layout.Layout") is lookup("T.Layout")
    assert len(registry()) > len(BUILTINS)


def test_dtype_entries_are_dtypes():
    for name in ("T.float16", "T.bfloat16", "T.float8_e4m3fn", "T.int8", "T.uint64", "T.bool"):
        b = lookup(name)
        assert b.kind == "dtype" and b.category == "type" and b.returns == name[2:]


def test_parameter_docs_name_real_parameters():
    from tilelang_core.language.catalog_param_docs import PARAM_DOCS

    for name, docs in PARAM_DOCS.items():
        params = {p.name for p in lookup(name).params}
        assert set(docs) <= params, (name, set(docs) - params)
    gemm = {p.name: p.doc for p in lookup("T.gemm").params}
    assert "N x K" in gemm["transpose_B"] and all(gemm.values())


def test_codes_named_in_hover_text_exist():
    import re

    from tilelang_core.codes import CODES

    for b in BUILTINS:
        for part in re.findall(r"Reported:(.*)", b.doc, flags=re.S):
            codes = re.findall(r"`([a-z]+(?:-[a-z]+)+)`", part)
            assert codes and set(codes) <= set(CODES), (b.name, set(codes) - set(CODES))


def test_code_examples_in_hover_text_are_valid_python():
    import ast
    import re
    import textwrap

    for b in BUILTINS:
        for block in re.findall(r"```python\n(.*?)```", b.doc, flags=re.S):
            ast.parse(textwrap.dedent(block))  # raises SyntaxError with the builtin in the traceback
