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
