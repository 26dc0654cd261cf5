"""User CUDA code in a kernel: T.import_source splices device functions into the generated file, T.call_extern
calls them (with TileLang's `dtype=` keyword spelling too) on T.access_ptr addresses, T.dp4a; lowered for
sm_90a and compiled with nvcc."""
from __future__ import annotations

import runpy
import textwrap

import pytest

pytestmark = [pytest.mark.tvm, pytest.mark.nvcc]

KERNELS = '''
import tilelang_core as tilelang
import tilelang_core.language as T

TWICE = "__device__ void twice4(const float* a, float* b) { for (int i = 0; i < 4; ++i) b[i] = 2.0f * a[i]; }"


@tilelang.jit(out_idx=[-1], target="sm_90a")
def twice(n: int = 256):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(n // 128, threads=32) as bx:
            a = T.alloc_local((4,), "float32")
            b = T.alloc_local((4,), "float32")
            tx = T.get_thread_binding()
            T.import_source(TWICE)
            for v in T.vectorized(4):
                a[v] = A[bx * 128 + tx * 4 + v]
            T.call_extern("twice4", T.access_ptr(a, "r"), T.access_ptr(b, "w"), dtype="float32")
            for v in T.vectorized(4):
                B[bx * 128 + tx * 4 + v] = b[v]
    return main


@tilelang.jit(out_idx=[-1], target="sm_90a")
def dot4(n: int = 128):
    @T.prim_func
    def main(A: T.Tensor((n, 16), "int8"), B: T.Tensor((n, 16), "int8"), C: T.Tensor((n,), "int32")):
        with T.Kernel(n // 32, threads=32) as bx:
            a = T.alloc_local((16,), "int8")
            b = T.alloc_local((16,), "int8")
            acc = T.alloc_local((1,), "int32")
            tx = T.get_thread_binding()
            for v in T.vectorized(16):
                a[v] = A[bx * 32 + tx, v]
                b[v] = B[bx * 32 + tx, v]
            acc[0] = 0
            for k in T.serial(4):
                T.dp4a(a[k * 4], b[k * 4], acc[0])
            C[bx * 32 + tx] = acc[0]
    return main
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("extern") / "extern_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return runpy.run_path(str(path), run_name="extern_kernels")


def test_imported_source_is_in_the_file_and_called(mod):
    src = mod["twice"]().get_kernel_source()
    assert src.index("__device__ void twice4(") < src.index("__global__")
    assert "twice4((&(a_ptr[0])), (&(b_ptr[0])));" in src  # a statement: no cast of its (void) value


def test_dp4a_calls_the_cuda_intrinsic(mod):
    src = mod["dot4"]().get_kernel_source()
    assert "__dp4a(" in src and src.count("tl::dp4a(") == 1


WARP = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(out_idx=[-1], target="sm_90a")
def neighbour(n: int = 64):
    @T.prim_func
    def main(A: T.Tensor((n,), "float16"), B: T.Tensor((n,), "float16")):
        with T.Kernel(n // 32, threads=32) as bx:
            tx = T.get_thread_binding()
            v = T.alloc_local((1,), "float16")
            v[0] = A[bx * 32 + tx]
            B[bx * 32 + tx] = T.tvm_warp_shuffle(0xFFFFFFFF, v[0], (tx ^ 1) % 32, 32, 32) + v[0]
    return main
'''


def test_warp_shuffle_is_shfl_sync_on_the_value_type(tmp_path):
    path = tmp_path / "warp_kernels.py"
    path.write_text(textwrap.dedent(WARP))
    src = runpy.run_path(str(path), run_name="warp_kernels")["neighbour"]().get_kernel_source()
    line = next(ln for ln in src.split("\n") if "__shfl_sync(" in ln)
    assert "((half)__shfl_sync" not in line and "float)__shfl_sync" not in line  # shuffled as half, no casts


UNKNOWN_TEXT = '''
import tilelang
import tilelang.language as T
from some_library import intrinsics

SOURCE, NAME = intrinsics()


@T.prim_func
def k(A: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.import_source(SOURCE)
        T.call_extern(NAME, T.access_ptr(A, "w"), dtype="float32")
'''


def test_source_text_the_checker_cannot_know_is_silent_there_and_refused_when_lowered():
    from tilelang_core import check_source
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import lower

    res = check_source(UNKNOWN_TEXT, "unknown_text.py")
    assert [d for d in res.diagnostics if d.is_error] == []
    with pytest.raises(CompileError, match=r"T.import_source needs its CUDA source text as a Python string .*SOURCE"):
        lower(res.kernels[0], target="sm_90a")


DEVICE_ASSERT = '''
import tilelang.language as T


@T.prim_func
def program(A: T.Tensor((128,), T.int32)):
    with T.Kernel(1, threads=128):
        tid = T.get_thread_binding()
        T.device_assert(A[tid] >= 0, "negative")
'''


def test_device_assert_checks_on_the_device_naming_its_line():
    """T.device_assert lowers to a check that prints the user's line and traps (it was refused by the CUDA
    lowering; the CPU backend stops with the line too), and the file compiles with nvcc."""
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    source = generate(check_source(DEVICE_ASSERT, "da.py").kernels[0], "sm_90a").source
    call = next(ln for ln in source.split("\n") if "tl::device_assert(" in ln and "void" not in ln)
    assert "A_ptr[" in call and call.rstrip().endswith(", 9);")  # the condition, then line 9 of the user's file
    assert compile_cubin(source, "sm_90a")[:4] == b"\x7fELF"
