"""print_func renders parsed kernels as TileLang-style Python that parses back to the same text."""
from __future__ import annotations

from fe_helpers import parse
from test_frontend_parser import ATTENTION, GEMM

from tilelang_core.ir import nodes as N
from tilelang_core.ir.printer import expr_str, print_func, region_str, shape_str


def _reprint(text: str) -> str:
    (k,) = parse(text, header=False)[0]
    return print_func(k)


def test_gemm_text():
    (k,) = parse(GEMM)[0]
    text = print_func(k)
    assert text.splitlines()[0] == "# matmul(M=1024, N=2048, K=512)"
    assert "def gemm(A: T.Tensor((1024, 512), T.float16)," in text
    assert "    with T.Kernel(16, 8, threads=256) as (bx, by):" in text
    assert "        for k in T.Pipelined(16, num_stages=3):" in text
    assert "            T.copy(B[bx * 128:bx * 128 + 128, k * 32:k * 32 + 32], B_shared)" in text
    assert "            T.gemm(A_shared, B_shared, C_local, transpose_B=True)" in text
    assert "        C_local = T.alloc_fragment((128, 128), T.float32)" in text


def test_round_trip_is_a_fixed_point():
    for source in (GEMM, ATTENTION):
        (k,) = parse(source)[0]
        first = print_func(k)
        second = _reprint("import tilelang\nimport tilelang.language as T\n\n" + first)
        assert second.splitlines() == first.splitlines()[1:]


def test_region_and_expr_helpers():
    buf = N.Buffer("Q", (N.Const(4), N.Const(64)), "float16", "shared.dyn")
    i = N.Var("i")
    r = N.Region(buf, (N.Axis(i, N.Const(1), False), N.Axis(N.Const(0), N.Const(64), True)), "slice")
    assert region_str(r) == "Q[i, :]"
    assert expr_str(N.Call("infinity", (), "float32")) == "T.infinity(T.float32)"
    assert shape_str(buf.shape) == "4x64"


def test_loop_headers_with_start_stop_and_step():
    (k,) = parse("""
@T.prim_func
def k(A: T.Tensor((64,), T.float32), n: T.int32):
    with T.Kernel(1) as bx:
        for i in T.serial(2, 10, 2):
            A[i] = 0.0
        for i in T.unroll(4, n):
            A[i] = 0.0
""")[0]
    text = print_func(k)
    assert "for i in T.serial(2, 10, 2):" in text and "for i in T.unroll(4, n):" in text
