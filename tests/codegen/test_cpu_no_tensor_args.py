"""A CPU kernel without tensor arguments may allocate on the heap: TVM takes the device of a heap allocation from
a tensor argument, and without one the build failed ("Unknown device id in current IR", a codegen-error)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.tvm


def test_kernel_without_tensor_arguments_builds_and_runs():
    import tilelang_core as tilelang
    import tilelang_core.language as T

    @T.prim_func
    def scratch(n: T.int32):
        with T.Kernel(1, threads=32):
            big = T.alloc_shared((128, 1024), "float32")  # 512 KiB: a heap allocation, not the stack
            for i in T.serial(n):
                big[i, 0] = T.cast(i, "float32")

    kernel = tilelang.compile(scratch, target="cpu")
    kernel(64)  # built (it raised CompileError) and run
