"""T.gemm rules on hand-built IR."""
from __future__ import annotations

from analysis_irb import alloc, buf, codes, full, kernel, run, sl, sp, var
from tilelang_core.ir import nodes as N


def _gemm(a_shape, b_shape, c_shape, ta=False, tb=False, dt=("float16", "float16", "float32"), scopes=None):
    scopes = scopes or ("shared.dyn", "shared.dyn", "local.fragment")
    A = buf("A_shared", a_shape, dt[0], scopes[0])
    B = buf("B_shared", b_shape, dt[1], scopes[1])
    C = buf("C_local", c_shape, dt[2], scopes[2])
    g = N.Gemm(full(A), full(B), full(C), ta, tb, span=sp())
    allocs = [alloc(x) for x in (A, B, C) if x.scope != "global"]
    params = tuple(x for x in (A, B, C) if x.scope == "global")
    return kernel(allocs + [g], params=params)


def test_good_gemm_is_clean():
    assert codes(_gemm((128, 32), (32, 128), (128, 128))) == []


def test_transposed_b_is_clean_and_k_mismatch_found():
    assert codes(_gemm((128, 32), (128, 32), (128, 128), tb=True)) == []
    assert codes(_gemm((128, 32), (64, 128), (128, 128))) == ["gemm-shape-mismatch"]


def test_k_message_names_both_k():
    diags, _ = run(_gemm((64, 32), (64, 128), (64, 128)))
    assert "K = 32" in diags[0].message and "K = 64" in diags[0].message and "block_K" in diags[0].message
    assert len(diags[0].related) == 3


def test_transpose_a():
    assert codes(_gemm((32, 128), (32, 128), (128, 128), ta=True)) == []
    assert codes(_gemm((128, 32), (32, 128), (128, 128), ta=True)) == ["gemm-shape-mismatch"]


def test_accumulator_shape():
    assert codes(_gemm((128, 32), (32, 128), (128, 64))) == ["gemm-accumulator-shape"]


def test_leading_unit_dims_ok_and_non_unit_rejected():
    assert codes(_gemm((1, 128, 32), (32, 128), (128, 128))) == []
    assert codes(_gemm((2, 128, 32), (32, 128), (128, 128))) == ["gemm-shape-mismatch"]


def test_scopes():
    g = _gemm((128, 32), (32, 128), (128, 128), scopes=("global", "shared.dyn", "local.fragment"))
    assert codes(g) == ["gemm-operand-scope"]
    g = _gemm((128, 32), (32, 128), (128, 128), scopes=("shared.dyn", "shared.dyn", "global"))
    assert codes(g) == ["gemm-operand-scope"]
    g = _gemm((128, 32), (32, 128), (128, 128), scopes=("local.fragment", "shared.dyn", "local.fragment"))
    assert codes(g) == []


def test_dtypes():
    assert codes(_gemm((64, 32), (32, 64), (64, 64), dt=("float16", "float32", "float32"))) == ["gemm-dtype-mismatch"]
    assert codes(_gemm((64, 32), (32, 64), (64, 64), dt=("float8_e4m3fn", "float8_e5m2", "float32"))) == []
    assert codes(_gemm((64, 32), (32, 64), (64, 64), dt=("int8", "int8", "int32"))) == []
    assert codes(_gemm((64, 32), (32, 64), (64, 64), dt=("int8", "int8", "float32"))) == ["gemm-dtype-mismatch"]
    assert codes(_gemm((64, 32), (32, 64), (64, 64), dt=("bfloat16", "bfloat16", "float32"))) == []
    assert codes(_gemm((64, 32), (32, 64), (64, 64), dt=("float16", "float16", "float16"))) == []


def test_symbolic_tile_dims_never_error_but_runtime_param_does():
    m = var("block_M", "symbolic")
    assert codes(_gemm((m, 32), (32, 128), (m, 128))) == []
    n = var("n", "param")
    assert codes(_gemm((n, 32), (32, 128), (n, 128))) == ["gemm-dynamic-shape"]


def test_eager_kernel_param_dims_may_be_t_const():
    """In an eager @tilelang.jit kernel a "param" dim may come from T.const (specialised at compile time)."""
    import dataclasses

    n = var("n", "param")
    lazy = _gemm((n, 32), (32, 128), (n, 128))
    eager = dataclasses.replace(lazy, factory=lazy.name)
    assert codes(lazy) == ["gemm-dynamic-shape"]
    assert codes(eager) == []


def test_fragment_accumulator_must_be_whole():
    A, B = buf("A_shared", (64, 32)), buf("B_shared", (32, 64))
    C = buf("C_local", (128, 64), "float32", "local.fragment")
    part = N.Gemm(full(A), full(B), sl(C, (64, 64), (0, 64)), span=sp())
    whole_slice = N.Gemm(full(A), full(B), sl(C, (0, 64), (0, 64)), span=sp())
    assert codes(kernel([alloc(A), alloc(B), alloc(C), part])) == ["gemm-accumulator-shape"]
    assert codes(kernel([alloc(A), alloc(B), alloc(C), whole_slice])) == ["gemm-accumulator-shape"]
    C2 = buf("C2", (64, 64), "float32", "local.fragment")
    same = N.Gemm(full(A), full(B), sl(C2, (0, 64), (0, 64)), span=sp())
    assert codes(kernel([alloc(A), alloc(B), alloc(C2), same])) == []
