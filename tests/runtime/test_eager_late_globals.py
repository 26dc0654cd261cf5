"""An eager @jit kernel reads module globals at call time: a global assigned after the `def` is defined
(the real TileLang's online_softmax example sizes its tensors that way)."""
from __future__ import annotations

import runpy
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SOURCE = '''
import torch
import tilelang
import tilelang.language as T


@tilelang.jit(target="cpu")
def double_rows(X, block=4):
    X: T.Tensor([M, N], T.float32)
    Y = T.empty([M, N], T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        for i, j in T.Parallel(block, N):
            Y[bx * block + i, j] = X[bx * block + i, j] * 2.0
    return Y


M = 8
N = 16
X = torch.randn(M, N)
Y = double_rows(X)
'''


def test_global_assigned_after_the_kernel_def(tmp_path):
    from tilelang_core.alias import install_alias, uninstall_alias

    path = tmp_path / "late_globals.py"
    path.write_text(textwrap.dedent(SOURCE))
    had = "tilelang" in sys.modules
    install_alias(force=True)
    try:
        ns = runpy.run_path(str(path), run_name="__main__")
    finally:
        if not had:
            uninstall_alias()
    torch.testing.assert_close(ns["Y"], ns["X"] * 2)
