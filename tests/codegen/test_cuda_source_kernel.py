"""T.CUDASourceCodeKernel: the user's CUDA source is the kernel (its entry launched with the call's grid and threads,
the prim_func's tensors then its dims as arguments); a missing entry is reported at the call with the entries the
source has; the CPU backend, which cannot compile CUDA, refuses it at the call."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

COPY = '''
extern "C" __global__ void external_copy(float* A, float* B, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        B[i] = A[i];
    }
}
'''

KERNEL = '''
import tilelang.language as T

CODE = {code!r}
N = T.dynamic("N")

@T.prim_func
def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
    T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path={source}, entry_name="{entry}")
'''


def _check(entry="external_copy", source="CODE", code=COPY):
    return check_source(textwrap.dedent(KERNEL.format(code=code, source=source, entry=entry)), "<source_kernel>")


def _kernel(**kw):
    res = _check(**kw)
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_an_entry_the_source_lacks_is_reported_with_the_entries_it_has():
    (err,) = _check(entry="main_kernel").errors
    assert err.code == "bad-arguments" and err.span.line == 9
    assert "Available entries: external_copy" in err.message


def test_a_file_path_is_read(tmp_path):
    path = tmp_path / "copy.cu"
    path.write_text(COPY)
    assert not _check(source=repr(str(path))).errors
    (err,) = _check(source=repr(str(tmp_path / "missing.cu"))).errors
    assert "not found" in err.message


@pytest.mark.tvm
def test_the_cuda_kernel_is_the_users_source():
    from tilelang_core.codegen.cuda.generate import generate

    ck = generate(_kernel(), "sm_90a")
    assert ck.source == COPY and ck.kernel_symbol == "external_copy"
    assert [(p["name"], p["kind"]) for p in ck.params] == [("A", "tensor"), ("B", "tensor"), ("N", "dim")]
    assert ck.block == (128, 1, 1) and ck.grid == ("T.ceildiv(N, 128)",)


@pytest.mark.tvm
def test_an_entry_with_a_cpp_name_is_refused():
    from tilelang_core.codegen.cuda.common import LoweringError
    from tilelang_core.codegen.cuda.generate import generate

    with pytest.raises(LoweringError, match='extern "C"'):
        generate(_kernel(code=COPY.replace('extern "C" ', "")), "sm_90a")


@pytest.mark.tvm
@pytest.mark.nvcc
def test_the_source_builds_into_an_artifact_for_sm90a():
    from tilelang_core.runtime.artifact import build_artifact

    art = build_artifact(_kernel(), "sm_90a", cache=False)
    assert art.cubin[:4] == b"\x7fELF" and art.kernel_symbol == "external_copy"


@pytest.mark.tvm
def test_the_cpu_backend_refuses_it_at_the_call():
    from tilelang_core.codegen import cpu
    from tilelang_core.diagnostics import CompileError

    with pytest.raises(CompileError) as info:
        cpu.to_tir(_kernel())
    (diag,) = info.value.diagnostics
    assert diag.code == "lowering-unsupported" and diag.span.line == 9
    assert "T.CUDASourceCodeKernel runs user CUDA code" in diag.message
