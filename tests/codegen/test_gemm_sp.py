"""T.gemm_sp: 2:4 structured-sparse GEMM with TileLang's natural row-major metadata, run on the CPU backend against
torch's dense product of the decompressed matrix and lowered for sm_90a with nvcc; T.device_assert on the CPU."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang_core as tilelang
import tilelang_core.language as T


def sparse_gemm(target, trans_a=False, trans_b=False, dtype="float16", e_dtype="int16", accum="float32"):
    e_factor = {"int8": 2, "int16": 4, "int32": 8}[e_dtype] * (2 if dtype == "float32" else 4)

    @tilelang.jit(out_idx=[-1], target=target)
    def factory(M, N, K, block_M=64, block_N=64, block_K=64):
        a_shape = (K // 2, M) if trans_a else (M, K // 2)
        e_shape = (K // e_factor, M) if trans_a else (M, K // e_factor)
        b_shape = (N, K) if trans_b else (K, N)

        @T.prim_func
        def main(A: T.Tensor(a_shape, dtype), E: T.Tensor(e_shape, e_dtype), B: T.Tensor(b_shape, dtype),
                 C: T.Tensor((M, N), accum)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                a_s = T.alloc_shared((block_K // 2, block_M) if trans_a else (block_M, block_K // 2), dtype)
                e_s = T.alloc_shared((block_K // e_factor, block_M) if trans_a else (block_M, block_K // e_factor),
                                     e_dtype)
                b_s = T.alloc_shared((block_N, block_K) if trans_b else (block_K, block_N), dtype)
                c_l = T.alloc_fragment((block_M, block_N), accum)
                T.clear(c_l)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                    if trans_a:
                        T.copy(A[k * block_K // 2, by * block_M], a_s)
                        T.copy(E[k * block_K // e_factor, by * block_M], e_s)
                    else:
                        T.copy(A[by * block_M, k * block_K // 2], a_s)
                        T.copy(E[by * block_M, k * block_K // e_factor], e_s)
                    if trans_b:
                        T.copy(B[bx * block_N, k * block_K], b_s)
                    else:
                        T.copy(B[k * block_K, bx * block_N], b_s)
                    T.gemm_sp(a_s, e_s, b_s, c_l, trans_a, trans_a, trans_b)
                T.copy(c_l, C[by * block_M, bx * block_N])
        return main
    return factory


def checked_increment(target):
    @tilelang.jit(target=target)
    def factory(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "int32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.serial(n):
                    T.device_assert(A[i] < 5, "too big")
                    A[i] = A[i] + 1
        return main
    return factory
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("gemm_sp") / "gemm_sp_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return runpy.run_path(str(path), run_name="gemm_sp_kernels")


def semi_sparse(m, k, dtype):
    """A random (m, k) matrix with 2 nonzeros in every group of 4 along k (1 of 2 for float32)."""
    group, kept = (2, 1) if dtype == torch.float32 else (4, 2)
    x = torch.randn(m, k).to(dtype)
    keep = torch.rand(m, k // group, group).argsort(-1)[..., :kept]
    mask = torch.zeros(m, k // group, group, dtype=torch.bool).scatter_(-1, keep, True)
    return x * mask.reshape(m, k)


def compress(a, e_dtype):
    """Kept values (m, k/2) and natural row-major metadata: 4 bits a group, lowest group in the lowest bits."""
    m, k = a.shape
    bits = torch.iinfo(e_dtype).bits
    if a.dtype == torch.float32:
        nz = (a.reshape(m, k // 2, 2) != 0).int()
        pos = nz[..., 1]  # 0: the first of the pair kept, 1: the second
        values = a.reshape(m, k // 2, 2).gather(-1, pos.long().unsqueeze(-1)).reshape(m, k // 2)
        nibbles = torch.where(pos == 0, 0b0100, 0b1110)
        per = bits // 4
    else:
        order = torch.sort((a.reshape(m, k // 4, 4) != 0).int(), dim=-1, descending=True, stable=True).indices[..., :2]
        idx = order.sort(-1).values
        values = a.reshape(m, k // 4, 4).gather(-1, idx).reshape(m, k // 2)
        nibbles = idx[..., 0] | (idx[..., 1] << 2)
        per = bits // 4
    nibbles = nibbles.reshape(m, -1, per).long()
    meta = torch.zeros(nibbles.shape[:2], dtype=torch.long)
    for i in range(per):
        meta |= nibbles[..., i] << (4 * i)
    meta = torch.where(meta >= 2 ** (bits - 1), meta - 2 ** bits, meta)  # two's complement of the signed type
    return values, meta.to(e_dtype)


@pytest.mark.parametrize("trans_a, trans_b, dtype, e_dtype", [
    (False, False, torch.float16, torch.int16), (True, True, torch.float16, torch.int16),
    (False, True, torch.float16, torch.int32), (False, False, torch.float32, torch.int16)])
def test_gemm_sp_matches_the_dense_product_on_the_cpu_backend(mod, trans_a, trans_b, dtype, e_dtype):
    m, n, k = 128, 64, 128
    a = semi_sparse(m, k, dtype)
    b = torch.randn(n, k).to(dtype) if trans_b else torch.randn(k, n).to(dtype)
    values, meta = compress(a, e_dtype)
    if trans_a:
        values, meta = values.t().contiguous(), meta.t().contiguous()
    kernel = mod["sparse_gemm"]("cpu", trans_a, trans_b, str(dtype).split(".")[1], str(e_dtype).split(".")[1])
    got = kernel(m, n, k)(values, meta, b)
    ref = a.float() @ (b.float().t() if trans_b else b.float())
    torch.testing.assert_close(got, ref, rtol=1e-3, atol=1e-3)


def test_device_assert_stops_the_cpu_program_naming_the_line(mod):
    kernel = mod["checked_increment"]("cpu")(8)
    ok = torch.zeros(8, dtype=torch.int32)
    kernel(ok)
    assert ok.tolist() == [1] * 8
    with pytest.raises(Exception, match="T.device_assert failed at line"):
        kernel(torch.arange(8, dtype=torch.int32))


@pytest.mark.nvcc
@pytest.mark.parametrize("trans_a", [False, True])
def test_gemm_sp_compiles_for_sm90a(mod, trans_a):
    kernel = mod["sparse_gemm"]("sm_90a", trans_a, False)(256, 256, 256)
    assert kernel.arch == "sm_90a" and "__global__" in kernel.get_kernel_source()
