"""`tilelang.autotuner.grouped_compile`: a group of configs compiled, each config's kernel or error in its result."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.tvm


def _builder(size: int):
    import tilelang_core.language as T

    if size < 0:
        raise ValueError("size must be positive")

    @T.prim_func
    def kernel(A: T.Tensor((size,), "float32"), B: T.Tensor((size,), "float32")):
        with T.Kernel(1, threads=1):
            for i in T.serial(size):
                B[i] = A[i] + 1.0

    return kernel


def test_each_config_gets_its_kernel_or_its_error():
    import torch

    from tilelang_core.runtime.autotune_grouped import compile_grouped_unit
    from tilelang_core.runtime.autotune_param import CompileArgs

    items = [(0, {"size": 17}), (3, {"size": -1}), (1, {"size": 23})]
    results = compile_grouped_unit(items, CompileArgs(out_idx=[1], target="cpu"), _builder)
    assert [(i, c) for i, c, _, _ in results] == items
    (_, _, none, error) = results[1]
    assert none is None and isinstance(error, ValueError)
    for _, config, kernel, err in (results[0], results[2]):
        assert err is None
        a = torch.arange(config["size"], dtype=torch.float32)
        torch.testing.assert_close(kernel(a), a + 1.0)
