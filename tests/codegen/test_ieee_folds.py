"""Float `x * 0` and `x - x` are computed on both backends (NaN for an inf or NaN x, signed zeros kept), as are
`T.ieee_add/sub/mul` on the CPU; integer ones and every other operation still lower as before."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source
from tilelang_core.ir import nodes as N
from tilelang_core.ir.ieee_folds import ieee_fold_guard, same_expr
from tilelang_core.source import Span

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.{dt}), B: T.Tensor((8,), T.{dt})):
    with T.Kernel(1, threads=32):
        for i in T.Parallel(8):
            B[i] = {expr}
"""

MANY = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.{dt}), B: T.Tensor(({n}, 8), T.{dt})):
    with T.Kernel(1, threads=32):
        for i in T.Parallel(8):
{rows}
"""

FLOATS = ("float16", "bfloat16", "float32", "float64")
SPECIAL = [float("nan"), float("inf"), -float("inf"), 1.0, -1.0, 0.0, -0.0, 3.0]
EXPRS = {"A[i] * 0.0": lambda a: a * 0.0, "0 * A[i]": lambda a: 0.0 * a, "A[i] - A[i]": lambda a: a - a,
         "(A[i] + 1.0) - (A[i] + 1.0)": lambda a: (a + 1.0) - (a + 1.0),
         "T.ieee_mul(A[i], 0.0)": lambda a: a * 0.0, "T.ieee_sub(A[i], A[i])": lambda a: a - a,
         "T.ieee_add(A[i], 0.0)": lambda a: a + 0.0}


def _kernel(source: str):
    res = check_source(textwrap.dedent(source), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


A = N.Buffer("A", (N.Const(8),), "float32")
I, J = N.Var("i"), N.Var("j")


def _load(col: int, index: N.Var = I) -> N.Load:
    """A[index] written at column `col` (two loads of the same element differ only in their spans)."""
    return N.Load(A, (index,), Span(1, col, 1, col + 4))


@pytest.mark.parametrize("lhs,op,rhs,want", [
    (_load(0), "*", N.Const(0.0, "float32"), "ieee_mul"),
    (N.Const(0, "int32"), "*", _load(4), "ieee_mul"),
    (_load(0), "-", _load(9), "ieee_sub"),  # the same load at two columns
    (_load(0), "*", N.Const(2.0, "float32"), None),
    (_load(0), "*", _load(9), None),
    (N.Const(0.0, "float32"), "*", N.Const(3.0, "float32"), None),  # both known: folding is exact
    (_load(0), "-", _load(9, J), None),  # another index variable
    (_load(0), "+", _load(9), None),
    (N.Const(1.0, "float32"), "-", N.Const(1.0, "float32"), None),
])
def test_only_a_product_with_a_literal_zero_and_a_self_difference_are_guarded(lhs, op, rhs, want):
    assert ieee_fold_guard(N.BinOp(op, lhs, rhs)) == want


def test_same_expr_tells_variables_by_identity_not_by_name():
    assert same_expr(N.BinOp("+", I, N.Const(1)), N.BinOp("+", I, N.Const(1), Span(2, 0, 2, 5)))
    assert not same_expr(N.Var("i"), N.Var("i"))
    assert not same_expr(N.Const(1, "int32"), N.Const(1, "int64"))


@pytest.mark.tvm
@pytest.mark.parametrize("dt", FLOATS)
def test_cpu_keeps_ieee_semantics(dt):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.tensor(SPECIAL, dtype=getattr(torch, dt))
    b = torch.full((len(EXPRS), 8), 7.0, dtype=a.dtype)
    rows = "\n".join(f"            B[{n}, i] = {expr}" for n, expr in enumerate(EXPRS))
    cpu.build(_kernel(MANY.format(dt=dt, n=len(EXPRS), rows=rows)))(a, b)
    for got, (expr, ref) in zip(b, EXPRS.items()):
        want = ref(a)
        same = (got == want) & (torch.signbit(got) == torch.signbit(want)) | torch.isnan(got) & torch.isnan(want)
        assert bool(same.all()), (expr, got.tolist(), want.tolist())


@pytest.mark.tvm
@pytest.mark.parametrize("dt,mul,sub", [("float32", "__fmul_rn(", "__fsub_rn("),
                                        ("float64", "__dmul_rn(", "__dsub_rn("),
                                        ("float16", "__fmul_rn(", "__fsub_rn(")])
def test_cuda_computes_float_zero_products_and_self_differences(dt, mul, sub):
    from tilelang_core.codegen.cuda import generate

    source = generate(_kernel(SRC.format(dt=dt, expr="A[i] * 0.0 + (A[i] - A[i])")), "sm_90a").source
    assert mul in source and sub in source


@pytest.mark.tvm
@pytest.mark.parametrize("dt,expr,reads_a", [("int32", "A[i] * 0 + (A[i] - A[i])", False),
                                             ("float32", "A[i] * 2.0 - A[i]", True)])
def test_cuda_lowers_integer_and_other_float_arithmetic_as_before(dt, expr, reads_a):
    """Integer x * 0 and x - x still fold to 0 (the kernel no longer reads A); other float ops stay operators."""
    from tilelang_core.codegen.cuda import generate

    body = generate(_kernel(SRC.format(dt=dt, expr=expr)), "sm_90a").source.split("__global__")[-1]
    assert "_rn(" not in body and ("A_ptr[" in body) == reads_a


@pytest.mark.tvm
@pytest.mark.nvcc
def test_guarded_half_precision_kernels_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    for dt in ("float16", "bfloat16"):
        source = generate(_kernel(SRC.format(dt=dt, expr="A[i] * 0.0 + (A[i] - A[i])")), "sm_90a").source
        assert compile_cubin(source, "sm_90a")[:4] == b"\x7fELF", dt
