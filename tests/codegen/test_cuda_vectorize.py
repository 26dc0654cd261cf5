"""T.vectorized loops of element moves become 16-byte vector accesses on CUDA (gemv's split-K loads); loops with
anything else, or extents no vector divides, stay element by element."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

SRC = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def loads(A: T.Tensor((1024,), "{dt}"), B: T.Tensor((64, 1024), "{dt}"), C: T.Tensor((64,), "float32")):
        with T.Kernel(32, threads=(2, 32)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            a = T.alloc_local(({n},), "{dt}")
            b = T.alloc_local(({n},), "{dt}")
            acc = T.alloc_local((1,), "float32")
            T.clear(acc)
            for bk in T.serial(1024 // (32 * {n})):
                for k in T.vectorized({n}):
                    a[k] = A[bk * 32 * {n} + tk * {n} + k]
                    b[k] = {value}
                for k in T.serial({n}):
                    acc[0] += T.cast(a[k], "float32") * T.cast(b[k], "float32")
            C[bn * 2 + tn] = acc[0]
''')

PLAIN = "B[bn * 2 + tn, bk * 32 * {n} + tk * {n} + k]"


def _cuda(dt: str, n: int, value: str = PLAIN) -> str:
    result = check_source(SRC.format(dt=dt, n=n, value=value.format(n=n)), "loads.py")
    assert not result.errors, result.errors
    return lower(result.kernels[0], "sm_90a").source


@pytest.mark.tvm
@pytest.mark.parametrize("dt, n, vector", [("float16", 8, "uint4"), ("float32", 4, "float4"), ("float16", 4, "half4")])
def test_a_vectorized_copy_loop_is_one_vector_access(dt, n, vector):
    src = _cuda(dt, n)
    assert f"*({vector}*)(a_ptr + 0) = *({vector}*)(A_ptr" in src
    assert f"*({vector}*)(b_ptr + 0) = *({vector}*)(B_ptr" in src


@pytest.mark.tvm
def test_wider_loops_split_into_16_byte_vectors():
    src = _cuda("float16", 16)
    assert "*(uint4*)(a_ptr + (k_o * 8)) = *(uint4*)(A_ptr" in src


@pytest.mark.tvm
def test_a_loop_with_a_call_stays_element_by_element():
    src = _cuda("float32", 4, "T.exp(B[bn * 2 + tn, bk * 32 * {n} + tk * {n} + k])")
    assert "float4" not in src


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("n, load", [(8, "ld.global.nc.v4.u32"), (4, "ld.global.nc.v4.u16")])
def test_the_vector_loads_reach_ptx_as_vector_loads(n, load):
    import subprocess
    import tempfile
    from pathlib import Path

    from tilelang_core.runtime.artifact import arch_flags

    with tempfile.TemporaryDirectory() as tmp:
        cu, ptx = Path(tmp) / "k.cu", Path(tmp) / "k.ptx"
        cu.write_text(_cuda("float16", n))
        subprocess.run(["nvcc", "-ptx", "-O3", "-std=c++17", *arch_flags("sm_90a"), "-o", str(ptx), str(cu)],
                       check=True, capture_output=True)
        text = ptx.read_text()
    assert load in text and "ld.global.nc.u16" not in text


# a row-wise kernel: whole rows of a fragment from and to tensors (rms_norm, softmax)
ROWS = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def rows(A: T.Tensor(({m}, {n}), "float32"), B: T.Tensor(({m}, {n}), "float32")):
        with T.Kernel(32, threads=128) as bx:
            x = T.alloc_fragment((2, 1024), "float32")
            s = T.alloc_fragment((2,), "float32")
            T.copy(A[bx * 2, 0], x)
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(2, 1024):
                x[i, j] = x[i, j] / s[i]{extra}
            T.copy(x, B[bx * 2, 0])
''')


def _rows(m: int = 64, n: int = 1024, extra: str = ""):
    result = check_source(ROWS.format(m=m, n=n, extra=extra), "rows.py")
    assert not result.errors, result.errors
    return lower(result.kernels[0], "sm_90a")


@pytest.mark.tvm
def test_fragment_rows_copy_as_float4_runs():
    out = _rows()
    assert "generic 2x1024 over 128 threads, runs of 4" in out.stages["layouts"]
    assert "*(float4*)(x_ptr + (ro * 4)) = *(float4*)(A_ptr + (((((int)blockIdx.x) * 2048) + (ro * 512))" in out.source
    assert "*(float4*)(B_ptr + (((((int)blockIdx.x) * 2048) + (ro_1 * 512))" in out.source


@pytest.mark.tvm
def test_a_partial_last_block_guards_each_run():
    src = _rows(m=63).source  # block 31 holds one row of the tensor: the second row's runs are skipped
    assert "if (((((int)blockIdx.x) * 2) + (ro >> 1)) < 63) {" in src and "float4" in src


@pytest.mark.tvm
def test_rows_that_break_runs_stay_element_by_element():
    src = _rows(n=1022).source.split("tilelang source line")[1]  # the first copy: rows of 1022 misalign runs
    assert "float4" not in src and "A_ptr[" in src


@pytest.mark.tvm
def test_a_parallel_loop_over_tensors_keeps_one_element_per_thread():
    out = _rows(extra="\n        for i, j in T.Parallel(2, 1024):\n            B[bx * 2 + i, j] = x[i, j]")
    assert "runs of" not in out.stages["layouts"]


@pytest.mark.tvm
def test_a_vector_the_index_cannot_keep_aligned_narrows():
    # B's rows start at multiples of 8 halves, but "+ 2" leaves only 2-element (4-byte) alignment: the loop's
    # vectors narrow to what every access keeps aligned
    src = _cuda("float16", 8, "B[bn * 2 + tn, bk * 32 * {n} + tk * {n} + 2 + k]")
    assert "uint4" not in src and "*(half2*)(a_ptr + (k_o * 2)) = *(half2*)(A_ptr" in src
    assert "*(half2*)(b_ptr + (k_o * 2)) =" in src
    odd = _cuda("float16", 8, "B[bn * 2 + tn, bk * 32 * {n} + tk * {n} + 1 + k]")
    assert "*(half2*)" not in odd and "a_ptr[k] = A_ptr[" in odd


INDEX_VALUES = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def iota(A: T.Tensor((64,), "{dt}")):
        with T.Kernel(1, threads=32):
            for i in T.vectorized(4):
                A[i] = T.cast(i + 1, "{dt}")
''')


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("dt", ["int8", "uint8", "float8_e4m3fn", "float8_e5m2"])
def test_8_bit_values_computed_from_the_index_compile(dt):
    from tilelang_core.runtime.artifact import compile_cubin

    result = check_source(INDEX_VALUES.format(dt=dt), "iota.py")
    assert not result.errors, result.errors
    src = lower(result.kernels[0], "sm_90a").source
    assert "make_int(" not in src and "make_uint(" not in src
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.tvm
def test_a_constant_call_is_broadcast_into_one_vector_store():
    src = textwrap.dedent('''
        import tilelang.language as T

        @T.prim_func
        def fill(A: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=32):
                for i in T.vectorized(4):
                    A[i] = T.infinity(T.float32)
    ''')
    result = check_source(src, "fill.py")
    assert not result.errors, result.errors
    assert "*(float4*)(A_ptr + 0) = make_float4(CUDART_INF_F" in lower(result.kernels[0], "sm_90a").source
