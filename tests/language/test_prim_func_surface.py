"""What `@T.prim_func` returns reads like TileLang's PrimFunc (`attrs`, `params`, `buffer_map`, `body`, `script()`),
TileLang's lazy style (`def k(A): A: T.Tensor[...]`, `return T.empty(...)`) and the kernel-level annotations
`T.annotate_pass_configs` / `T.annotate_compile_flags`."""
from __future__ import annotations

import pytest

import tilelang_core.language as T
from tilelang_core.diagnostics import CompileError
from tilelang_core.ir import nodes as N
from tilelang_core.options import codegen_options, kernel_configs
from tilelang_core.runtime.jit import compile as tl_compile
from tilelang_core.runtime.jit import to_ir


def lazy_add_one():
    @T.prim_func
    def add_one(A):
        A: T.Tensor[[64], T.float32]
        B = T.empty([64], T.float32)
        with T.Kernel(1, threads=1):
            for i in T.serial(64):
                B[i] = A[i] + 1.0
        return B

    return add_one


def annotated(pass_configs, flags):
    @T.prim_func
    def copy_kernel(Y, X):
        X: T.Tensor[[16], T.float32]
        T.annotate_pass_configs(pass_configs)
        T.annotate_compile_flags(flags)
        Y: T.Tensor[[16], T.float32]
        with T.Kernel(1, threads=1):
            for i in T.serial(16):
                Y[i] = X[i] * 2.0

    return copy_kernel


def test_lazy_style_returns_its_t_empty_output_and_records_out_idx():
    kernel = lazy_add_one()
    assert kernel.attrs["global_symbol"] == "add_one"
    assert list(kernel.attrs["tilelang_out_idx"]) == [-1]
    assert "tilelang_pass_configs" not in kernel.attrs
    assert [p.name for p in kernel.params] == ["A", "B"]


@pytest.mark.tvm
def test_lazy_style_kernel_runs_on_the_cpu():
    torch = pytest.importorskip("torch")
    compiled = tl_compile(lazy_add_one(), target="cpu")
    a = torch.randn(64)
    torch.testing.assert_close(compiled(a), a + 1.0)


def test_out_idx_given_for_a_kernel_that_returns_its_outputs_is_a_value_error():
    with pytest.raises(ValueError, match="Out index conflict") as info:
        to_ir(lazy_add_one(), out_idx=[-1])
    assert isinstance(info.value, CompileError)
    assert info.value.diagnostics[0].code == "out-idx-conflict"


def test_annotations_land_on_the_kernel_and_params_follow_the_signature():
    kernel = annotated({"tl.enable_fast_math": True}, ["--use_fast_math", "-lineinfo"])
    assert kernel.attrs["tilelang_pass_configs"] == {"tl.enable_fast_math": True}
    assert kernel.attrs["tilelang_compile_flags"] == ["--use_fast_math", "-lineinfo"]
    assert "tilelang_out_idx" not in kernel.attrs
    assert [p.name for p in kernel.params] == ["Y", "X"]  # declared X first, but the signature says Y, X


def test_use_fast_math_flag_turns_fast_math_on_and_a_compile_config_wins():
    func = to_ir(annotated({"tl.disable_tma_lower": True}, "--use_fast_math"))
    assert codegen_options(kernel_configs(func)).fast_math and not codegen_options(kernel_configs(func)).tma
    plain = to_ir(annotated({"tl.disable_tma_lower": True}, []))
    assert not codegen_options(kernel_configs(plain)).fast_math
    overridden = plain.with_pass_configs({"tl.disable_tma_lower": False})
    assert codegen_options(kernel_configs(overridden)).tma


def test_pass_configs_that_are_not_a_dict_are_refused():
    with pytest.raises(CompileError) as info:
        to_ir(annotated(["tl.enable_fast_math"], []))
    diag = info.value.diagnostics[0]
    assert diag.code == "bad-arguments" and "T.annotate_pass_configs" in diag.message


def test_buffer_map_body_and_script():
    kernel = annotated({}, [])
    y, x = kernel.params
    assert isinstance(y, N.Buffer) and kernel.buffer_map[y] is y and [int(d.value) for d in y.shape] == [16]
    assert isinstance(kernel.body, N.SeqStmt)
    text = kernel.script()
    assert "def copy_kernel" in text and "Y[i] = X[i] * 2.0" in text


def signature_typed_with_empty():
    @T.prim_func
    def double(A: T.Tensor((16,), T.float32)):
        B = T.empty((16,), T.float32)
        with T.Kernel(1, threads=1):
            for i in T.serial(16):
                B[i] = A[i] * 2.0
        return B

    return double


def returns_a_number():
    @T.prim_func
    def bad(A: T.Tensor((16,), T.float32)):
        with T.Kernel(1, threads=1):
            A[0] = 1.0
        return 5

    return bad


def test_signature_typed_tensors_with_a_returned_t_empty_output():
    kernel = signature_typed_with_empty()
    assert [p.name for p in kernel.params] == ["A", "B"] and list(kernel.attrs["tilelang_out_idx"]) == [-1]


def test_a_prim_func_returning_anything_else_is_still_refused():
    with pytest.raises(CompileError) as info:
        to_ir(returns_a_number())
    assert info.value.diagnostics[0].code == "unsupported-syntax"
