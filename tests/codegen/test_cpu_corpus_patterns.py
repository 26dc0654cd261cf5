"""CPU numerics of patterns the real TileLang examples use (found by `benchmarks/corpus.py --run cpu`)."""
from __future__ import annotations

import runpy
import sys
import textwrap

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

ASTYPE = """
import tilelang
import tilelang.language as T


@T.prim_func
def dot(A: T.Tensor((64,), "float16"), B: T.Tensor((64,), "float16"), C: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_local((1,), "float32")
        T.clear(acc)
        for k in T.serial(64):
            acc[0] += A[k].astype("float32") * B[k].astype(T.float32)
        C[0] = acc[0]
"""

JIT_OUT_IDX_INT = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1, target="cpu")
def scale(n, block=32):
    @T.prim_func
    def k(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=32) as bx:
            for i in T.Parallel(block):
                Y[bx * block + i] = X[bx * block + i] * 3
    return k
'''


def test_astype_on_kernel_values_is_a_cast():
    mod = build_src(ASTYPE)
    a, b = torch.randn(64).half(), torch.randn(64).half()
    c = torch.zeros(1)
    mod(a, b, c)
    torch.testing.assert_close(c, (a.float() * b.float()).sum().view(1), rtol=1e-5, atol=1e-5)


def test_jit_out_idx_given_as_a_bare_int(tmp_path):
    from tilelang_core.alias import install_alias, uninstall_alias

    path = tmp_path / "scale.py"
    path.write_text(textwrap.dedent(JIT_OUT_IDX_INT))
    had = "tilelang" in sys.modules
    install_alias(force=True)
    try:
        kernel = runpy.run_path(str(path), run_name="scale")["scale"](100)
        x = torch.randn(100)
        torch.testing.assert_close(kernel(x), x * 3)
    finally:
        if not had:
            uninstall_alias()
