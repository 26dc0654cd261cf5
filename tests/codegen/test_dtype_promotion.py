"""Both backends promote by the dtype table's widths (digits in a name like float8_e4m3fn are not a width)."""
import pytest

from tilelang_core.analysis.infer import dtype_bits
from tilelang_core.codegen.cpu import expr as cpu_expr
from tilelang_core.codegen.cuda import expr as cuda_expr


@pytest.mark.parametrize("promote", [cpu_expr.promote, cuda_expr.promote], ids=["cpu", "cuda"])
def test_wider_operand_wins_by_table_width(promote):
    assert promote("float8_e4m3fn", "float32") == "float32"
    assert promote("int8", "int32") == "int32"
    assert promote("int64", "int32") == "int64"


def test_cpu_promotion_of_fp8_with_fp16_picks_fp16():
    assert cpu_expr.promote("float8_e4m3fn", "float16") == "float16"


def test_analysis_widths_come_from_the_table():
    assert dtype_bits("float8_e4m3fn") == 8 and dtype_bits("half") == 16 and dtype_bits("float16x2") == 32
    assert dtype_bits("int4") == 4 and dtype_bits("not-a-dtype") is None


MIXED = '''
import tilelang.language as T

@T.prim_func
def mixed(A: T.Tensor((128,), "float16"), B: T.Tensor((128,), "float32"), O: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_fragment([128], "float16")
        b = T.alloc_fragment([128], "float32")
        T.copy(A, a)
        T.copy(B, b)
        for i in T.Parallel(128):
            O[i] = T.exp2(a[i] - b[i])
'''


def test_math_of_a_half_minus_float_is_float_as_in_tir():
    """T.exp2(half - float) is exp2 of a float32, as TVM promotes mixed floats to the wider (flash decoding's lse)."""
    from tilelang_core import check_source
    from tilelang_core.frontend.expr_info import expr_dtype
    from tilelang_core.ir import nodes as N
    from tilelang_core.ir.visitor import walk

    kernel = check_source(MIXED, "mixed.py").kernels[0]
    call = next(n for n in walk(kernel.body) if isinstance(n, N.Call) and n.name == "exp2")
    assert call.dtype == "float32" and expr_dtype(call.args[0]) == "float32"


@pytest.mark.tvm
def test_mixed_precision_exp2_lowers_in_float32_on_cuda_and_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core import check_source, lower
    from tilelang_core.codegen import cpu

    kernel = check_source(MIXED, "mixed.py").kernels[0]
    src = lower(kernel, "sm_90a").source
    assert "exp2f(" in src and "hexp2" not in src
    a = (torch.rand(128) * 4).half()
    b = torch.rand(128) * 4 + 0.001
    out = torch.empty(128)
    cpu.build(kernel)(a, b, out)
    torch.testing.assert_close(out, torch.exp2(a.float() - b), rtol=1e-6, atol=1e-6)
