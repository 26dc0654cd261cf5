"""T.CUDASourceCodeKernel: an entry_name the CUDA source does not define is bad-arguments listing the source's
`__global__` functions (as TileLang's "Available entries: ..."); a valid one is refused (lowering-unsupported)
instead of being an unknown builtin. The source may be the text or a path (a str or a pathlib.Path)."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

CUDA = 'extern "C" __global__ void external_copy(float* A, float* B, int n) { }\\n__global__ void other(int* x) { }\\n'

SRC = '''
import tilelang.language as T

CUDA = '{cuda}'

@T.prim_func
def k(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
    T.CUDASourceCodeKernel(1, threads=128, source_code_or_path={source}, entry_name="{entry}")
'''


def _errors(source: str, entry: str):
    res = check_source(textwrap.dedent(SRC.format(cuda=CUDA, source=source, entry=entry)), "<test>")
    return [(d.code, d.span.line, d.message) for d in res.errors]


def test_an_entry_the_source_does_not_define_lists_the_available_entries():
    [(code, line, message)] = _errors("CUDA", "main_kernel")
    assert (code, line) == ("bad-arguments", 8)
    assert message.endswith("Available entries: external_copy, other")


def test_a_valid_entry_is_refused_not_unknown():
    [(code, line, message)] = _errors("CUDA", "external_copy")
    assert code == "lowering-unsupported" and "T.CUDASourceCodeKernel" in message


def test_the_source_may_be_a_path_in_a_running_program(tmp_path):
    import tilelang_core as tilelang
    import tilelang_core.language as T
    from tilelang_core.diagnostics import CompileError

    path = tmp_path / "kernel.cu"
    path.write_text(CUDA.replace("\\n", "\n"))

    @T.prim_func
    def k(A: T.Tensor((128,), T.float32)):
        T.CUDASourceCodeKernel(1, threads=128, source_code_or_path=path, entry_name="main_kernel")

    with pytest.raises(CompileError, match="Available entries: external_copy, other"):
        tilelang.compile(k, target="cpu")
