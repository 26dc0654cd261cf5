"""An eager @jit kernel whose signature takes `T.ptr` parameters: each is a pointer parameter the caller gives a
tensor for (its address), wrapped in the body by `T.make_tensor(A, shape, dtype)`; `par_compile` takes `T.ptr()`
placeholders for them. (The pointers were not parameters: the CPU backend found no binding for them.)"""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SOURCE = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(target="cpu")
def axpy_ptr(X: T.ptr, Y: T.ptr, n: int, alpha: float, dtype: T.dtype = T.float32, block: int = 32):
    X = T.make_tensor(X, (n,), dtype)
    Y = T.make_tensor(Y, (n,), dtype)
    with T.Kernel(T.ceildiv(n, block), threads=32) as bx:
        for i in T.Parallel(block):
            Y[bx * block + i] = Y[bx * block + i] + X[bx * block + i] * alpha
'''


def _factory(tmp_path):
    path = tmp_path / "axpy_ptr.py"
    path.write_text(textwrap.dedent(SOURCE))
    return runpy.run_path(str(path))["axpy_ptr"]


def test_pointer_parameters_take_the_tensors_passed_for_them(tmp_path):
    axpy = _factory(tmp_path)
    x, y = torch.randn(96), torch.randn(96)
    expected = y + 0.5 * x
    axpy(x, y, 96, 0.5)
    torch.testing.assert_close(y, expected)


def test_par_compile_takes_pointer_placeholders(tmp_path):
    import tilelang_core.language as T

    axpy = _factory(tmp_path)
    kernels = axpy.par_compile([{"X": T.ptr(), "Y": T.ptr(), "n": 64, "alpha": 2.0, "dtype": dt}
                                for dt in (T.float32, T.float16)])
    assert [str(p.dtype) for p in kernels[0].func.params] == ["handle", "handle"]
    x, y = torch.ones(64, dtype=torch.float16), torch.zeros(64, dtype=torch.float16)
    axpy(x, y, 64, 2.0, torch.float16)
    assert bool((y == 2.0).all())
