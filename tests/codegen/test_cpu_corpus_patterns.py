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

REINTERPRET = """
import tilelang
import tilelang.language as T


@T.prim_func
def bits(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "uint32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(64):
            if T.likely(i < 64):
                Y[i] = T.reinterpret(X[i], T.uint32) >> 1
"""

VIEWS = """
import tilelang
import tilelang.language as T


@T.prim_func
def views(A: T.Tensor((16, 8), "float32"), B: T.Tensor((8, 16), "float32"), H: T.Tensor((16, 16), "float16")):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((16, 8), "float32")
        T.copy(A, s)
        v = T.reshape(s, [8, 16])
        T.copy(v, B)
        h = T.view(s, shape=[16, 16], dtype="float16")
        for i, j in T.Parallel(16, 16):
            H[i, j] = h[i, j]
"""

JIT_KERNELS = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1], target="cpu")
def half_rows(n):
    @T.prim_func
    def k(X: T.Tensor((n, 64), "float32"), Y: T.Tensor((n, 64), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i, j in T.Parallel(n, 64):
                if i < n // 2:
                    Y[i, j] = X[i, j]
    return k


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


@pytest.fixture(scope="module")
def jit_mod(tmp_path_factory):
    from tilelang_core.alias import install_alias, uninstall_alias

    path = tmp_path_factory.mktemp("jit") / "jit_kernels.py"
    path.write_text(textwrap.dedent(JIT_KERNELS))
    had = "tilelang" in sys.modules
    install_alias(force=True)
    yield runpy.run_path(str(path), run_name="jit_kernels")
    if not had:
        uninstall_alias()


def test_jit_out_idx_given_as_a_bare_int(jit_mod):
    x = torch.randn(100)
    torch.testing.assert_close(jit_mod["scale"](100)(x), x * 3)


def test_cpu_outputs_start_zeroed_where_the_kernel_leaves_them(jit_mod):
    kernel = jit_mod["half_rows"](256)
    x = torch.randn(256, 64)
    for _ in range(3):  # freed host memory full of NaN must not show through the unwritten rows
        junk = torch.full((256, 64), float("nan"))
        del junk
        y = kernel(x)
        torch.testing.assert_close(y[:128], x[:128])
        assert torch.count_nonzero(y[128:]) == 0


def test_profiler_func_is_the_kernel(jit_mod):
    kernel = jit_mod["scale"](64)
    x = torch.randn(64)
    torch.testing.assert_close(kernel.get_profiler().func(x), x * 3)


def test_views_share_their_base_storage():
    mod = build_src(VIEWS)
    a = torch.randn(16, 8)
    b, h = torch.zeros(8, 16), torch.zeros(16, 16, dtype=torch.float16)
    mod(a, b, h)
    torch.testing.assert_close(b, a.reshape(8, 16))
    assert torch.equal(h.view(torch.int16), a.view(torch.float16).reshape(16, 16).view(torch.int16))


def test_reinterpret_reads_the_same_bits():
    mod = build_src(REINTERPRET)
    x = torch.randn(64)
    y = torch.zeros(64, dtype=torch.uint32)
    mod(x, y)
    assert torch.equal(y.view(torch.int32), (x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF).__rshift__(1).to(torch.int32))
