"""An error TileLang's C++ lowering raises (tvm.error.InternalError) waits for the compile and is that error when
the program has imported tvm, a RuntimeError otherwise: T.async_copy between two shared tiles (async-copy-scope)."""
from __future__ import annotations

import sys

import pytest

from tilelang_core.codes import python_error
from tilelang_core.diagnostics import CompileError

KERNEL = '''
import tilelang.language as T


@T.prim_func
def shared_to_shared(A: T.Tensor((4,), T.float16), B: T.Tensor((4,), T.float16)):
    with T.Kernel(1, threads=1):
        S0 = T.alloc_shared((4,), T.float16)
        S1 = T.alloc_shared((4,), T.float16)
        T.copy(A[0:4], S0)
        T.async_copy(S0, S1)
        T.copy(S1, B[0:4])
'''


def test_the_name_resolves_to_tvms_class_once_tvm_is_imported(monkeypatch):
    monkeypatch.delitem(sys.modules, "tvm.error", raising=False)
    assert python_error(["async-copy-scope"]) is RuntimeError
    monkeypatch.undo()
    import tvm.error

    assert python_error(["async-copy-scope"]) is tvm.error.InternalError
    assert python_error(["copy-extent-mismatch"]) is None


@pytest.mark.tvm
def test_async_copy_between_shared_tiles_raises_at_the_compile(run_aliased):
    import tvm.error

    import tilelang

    kernel = run_aliased("async_scope", KERNEL)["shared_to_shared"]  # the definition raises nothing
    with pytest.raises(tvm.error.InternalError, match=r"T\.async_copy only supports global->shared") as info:
        tilelang.compile(kernel, target="cpu")
    assert isinstance(info.value, CompileError) and info.value.diagnostics[0].code == "async-copy-scope"
    assert info.value.diagnostics[0].span.line == 11
