"""The runtime T namespace used when a TileLang file is executed (JIT path)."""
from __future__ import annotations

import subprocess
import sys

import pytest

import tilelang_core.language as T
from tilelang_core.language.types import (
    DType,
    MacroDef,
    PrimFuncDef,
    SymbolicDim,
    TensorType,
)


def test_dtypes_are_strings():
    assert T.float16 == "float16" and isinstance(T.float16, DType)
    assert T.half == "float16" and T.float == "float32" and T.int == "int32" and T.bool == "bool"
    assert T.float8_e4m3fn == "float8_e4m3fn"
    assert {T.float16: 1}["float16"] == 1


def test_tensor_call_and_subscript_forms():
    assert T.Tensor((128, 64), T.float16) == TensorType((128, 64), "float16", "global")
    assert T.Tensor[(128, 64), "half"] == TensorType((128, 64), "float16", "global")
    assert T.Tensor[128, 64, T.int8] == TensorType((128, 64), "int8", "global")
    assert T.Tensor(16) == TensorType((16,), "float32", "global")
    assert T.Buffer((4, 4), "float32").scope == "global"
    assert T.StridedTensor((4, 4), (8, 1), T.bfloat16).dtype == "bfloat16"


def test_symbolic_dims():
    m = T.dynamic("m")
    assert m == SymbolicDim("m", "int32")
    assert T.symbolic("m, n") == (SymbolicDim("m"), SymbolicDim("n"))
    assert T.Tensor((m, 64), T.float16).shape == (m, 64)
    assert T.const("M N K") == (SymbolicDim("M"), SymbolicDim("N"), SymbolicDim("K"))
    assert T.empty((4, 8), T.float16) == TensorType((4, 8), "float16", "global")
    assert T.empty(4, 8, dtype="float32").shape == (4, 8)


def test_ceildiv_and_policy():
    assert T.ceildiv(1000, 128) == 8 and T.ceildiv(1024, 128) == 8 and T.ceildiv(0, 4) == 0
    with pytest.raises(RuntimeError, match="inside a @T.prim_func"):
        T.ceildiv(T.dynamic("m"), 4)
    assert T.GemmWarpPolicy.FullRow.name == "FullRow" and int(T.GemmWarpPolicy.Square) == 0


STUB_CALLS = {"copy": (1, 2), "gemm": (1, 2, 3), "alloc_shared": ((16,), "float16"), "Parallel": (1, 2),
              "Kernel": (1, 2), "exp2": (1,), "max": (1, 2), "print": (1,)}


@pytest.mark.parametrize("name", sorted(STUB_CALLS))
def test_stubs_raise_with_the_builtin_name(name):
    stub = getattr(T, name)
    assert stub.__name__ == name and stub.__module__ == "tilelang_core.language"
    assert stub.__doc__
    from tilelang_core.compat import UnsupportedFeatureError

    with pytest.raises(UnsupportedFeatureError, match=rf"^T\.{name} outside a kernel body is not supported .*: "
                       rf"T\.{name} can only be used inside a @T.prim_func kernel body or a @T.macro"):
        stub(*STUB_CALLS[name])


@pytest.mark.parametrize("call", [lambda: T.gemm(None, None, None, use_2cta=True), lambda: T.exp2(1, 2),
                                  lambda: T.gemm(None, None)])
def test_stub_arguments_that_do_not_bind_are_a_type_error_as_in_python(call):
    with pytest.raises(TypeError, match=r"T\.(gemm|exp2) (has no parameter 'use_2cta'|takes at most|is missing)"):
        call()


def test_unknown_names_and_submodules():
    with pytest.raises(AttributeError, match="no attribute 'alloc_shard'"):
        T.alloc_shard  # noqa: B018
    import tilelang_core.language.capture as capture_mod
    import tilelang_core.language.registry as registry_mod

    assert hasattr(registry_mod, "lookup") and hasattr(capture_mod, "CapturedFunc")
    assert {"copy", "gemm", "float16", "Tensor", "Kernel"} <= set(dir(T))


@T.prim_func
def _kernel(A: T.Tensor((16,), T.float32)):
    with T.Kernel(1, threads=32):
        T.clear(A)


@T.macro
def _helper(buf):
    T.clear(buf)


def test_prim_func_and_macro_capture_source():
    assert isinstance(_kernel, PrimFuncDef) and _kernel.name == "_kernel"
    cap = _kernel.captured
    assert cap.source.startswith("@T.prim_func\ndef _kernel(") and "T.clear(A)" in cap.source
    assert cap.filename == __file__ and cap.first_line > 1 and cap.env["T"] is T
    assert isinstance(_helper, MacroDef) and "T.clear(buf)" in _helper.captured.source
    assert isinstance(T.prim_func()(_kernel.captured.pyfunc), PrimFuncDef)


def test_layout_stand_ins():
    from tilelang_core.language import layout

    assert layout.make_swizzled_layout.__module__ == "tilelang_core.layout"
    with pytest.raises(RuntimeError, match="tilelang.layout.make_swizzled_layout can only be used inside"):
        layout.make_swizzled_layout(None)


def test_importing_the_namespace_imports_neither_tvm_nor_torch():
    code = ("import sys, tilelang_core.language as T, tilelang_core.language.layout; T.copy; T.float16; "
            "print('tvm' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_dtype_objects():
    torch = pytest.importorskip("torch")
    assert T.dtype(torch.bfloat16) == "bfloat16" and T.dtype("half") == T.float16
    assert T.dtype(T.float16).bits == 16 and T.float8_e4m3fn.bits == 8 and T.dtype("float16x2").lanes == 2
    assert T.dtype("float16").as_torch() is torch.float16 and T.float32.as_torch() is torch.float32
    assert T.Tensor((4,), torch.int8).dtype.bits == 8
    with pytest.raises(TypeError, match="unknown dtype 'half16'"):
        T.dtype("half16")


def test_frontend_reads_runtime_values():
    """The JIT hands live values to the frontend: stubs and markers must map to the canonical builtin names."""
    from tilelang_core.frontend.values import BuiltinRef, EnumValue, from_live
    from tilelang_core.language import layout

    assert from_live(T.copy) == BuiltinRef("T.copy")
    assert from_live(layout.make_swizzled_layout) == BuiltinRef("tilelang.layout.make_swizzled_layout")
    assert from_live(T.GemmWarpPolicy.FullRow) == EnumValue("GemmWarpPolicy", "FullRow")
    assert from_live(T.float16) == "float16"
    spec = from_live(T.Tensor((T.dynamic("m"), 64), T.bfloat16))
    assert spec.dtype == "bfloat16" and spec.shape[1] == 64


def test_macro_parameter_buffer_types():
    assert T.SharedBuffer((64, 32), T.float16) == TensorType((64, 32), "float16", "shared.dyn")
    assert T.FragmentBuffer([64, 64], "float32").scope == "local.fragment"
    assert T.LocalBuffer[(8,), T.int32].scope == "local"


def test_every_layout_function_has_a_stand_in():
    from tilelang_core.language import layout
    from tilelang_core.language.registry import registry

    names = {n.rsplit(".", 1)[1] for n in registry() if n.startswith("tilelang.layout.")}
    assert names <= set(layout.__all__) and "make_wgmma_swizzled_layout" in names
    for name in names:
        assert getattr(layout, name).__module__ == "tilelang_core.layout"
