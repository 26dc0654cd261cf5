"""CPU-backend failures found on the real TileLang examples (`benchmarks/corpus.py --run cpu`), each a small kernel
compared with torch, and lowered for sm_90a where the construct exists on CUDA."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

# deepseek_v4/act_quant.py's power-of-two scale: uint32 bit fields of a let-bound value tested in T.if_then_else
# (TVM's CompactBufferAllocation crashed on the unsigned comparison: "cannot make uint from negative value -1")
POW2_CEIL = """
import tilelang
import tilelang.language as T


@T.prim_func
def pow2_ceil(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(64):
            bits_x = T.reinterpret(X[i], "uint32")
            exp_x = (bits_x >> 23) & 0xFF
            man_bits = bits_x & ((1 << 23) - 1)
            e = T.Cast("int32", exp_x - 127 + T.if_then_else(man_bits != 0, 1, 0))
            Y[i] = T.reinterpret((e + 127) << 23, "float32")
"""

UNSIGNED_COMPARE = """
import tilelang
import tilelang.language as T


@T.prim_func
def ucmp(A: T.Tensor((64,), "uint32"), B: T.Tensor((64,), "uint64"), Y: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(64):
            a = A[i]
            b = B[i]
            Y[i] = (T.if_then_else(a > 2147483648, 1, 0) + T.if_then_else(a != 0, 2, 0)
                    + T.if_then_else(b >= 9223372036854775808, 4, 0) + T.if_then_else(b < 5, 8, 0))
"""


def test_pow2_ceil_from_uint_bit_fields_matches_torch():
    mod = build_src(POW2_CEIL)
    x = torch.cat([torch.tensor([1.0, 2.0, 0.75, 3.0625 / 448]), torch.rand(60) * 100 + 1e-4])
    y = torch.empty(64)
    mod(x, y)
    torch.testing.assert_close(y, torch.pow(2.0, torch.ceil(torch.log2(x))), rtol=0, atol=0)


def test_unsigned_comparisons_past_the_signed_range_match_torch():
    mod = build_src(UNSIGNED_COMPARE)
    a = torch.tensor([0, 1, 2**31, 2**31 + 1, 2**32 - 1] * 13)[:64]
    b_bits = torch.tensor([0, 4, 5, 2**63 - 1, -2**63, -1] * 11)[:64]  # uint64 0, 4, 5, 2**63 - 1, 2**63, 2**64 - 1
    y = torch.empty(64, dtype=torch.int32)
    mod(a.to(torch.uint32), b_bits.view(torch.uint64), y)
    want = ((a > 2**31).int() + 2 * (a != 0).int() + 4 * (b_bits < 0).int() + 8 * ((b_bits >= 0) & (b_bits < 5)).int())
    assert torch.equal(y, want.int())


# deepseek_v32/sparse_mla_bwd.py: rows of a shared tile added into gathered rows of a global tensor, 4 at a time
ATOMIC_ADDX = """
import tilelang
import tilelang.language as T


@T.prim_func
def scatter_add(Idx: T.Tensor((4, 8), "int32"), Src: T.Tensor((32, 16), "float32"), Src2: T.Tensor((32, 16), "DT"),
                Dst: T.Tensor((10, 16), "float32"), Dst2: T.Tensor((10, 16), "DT")):
    with T.Kernel(4, threads=64) as bx:
        s = T.alloc_shared((8, 16), "float32")
        s2 = T.alloc_shared((8, 16), "DT")
        T.copy(Src[bx * 8, 0], s)
        T.copy(Src2[bx * 8, 0], s2)
        for r, c in T.Parallel(8, 4):
            T.atomic_addx4(Dst[Idx[bx, r], c * 4], s[r, c * 4])
        for r, c in T.Parallel(8, 8):
            T.atomic_addx2(Dst2[Idx[bx, r], c * 2], s2[r, c * 2])
"""


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_atomic_addx2_x4_scatter_add_matches_torch(dtype):
    mod = build_src(ATOMIC_ADDX.replace("DT", dtype))
    tdt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 10, (4, 8), generator=gen, dtype=torch.int32)  # repeated rows accumulate
    src = torch.randn(32, 16, generator=gen)
    src2 = torch.randint(-8, 8, (32, 16), generator=gen).to(tdt)  # exact in every dtype, in any order
    dst, dst2 = torch.randn(10, 16, generator=gen), torch.zeros(10, 16, dtype=tdt)
    want, want2 = dst.clone(), dst2.float()
    want.index_add_(0, idx.flatten().long(), src)
    want2.index_add_(0, idx.flatten().long(), src2.float())
    mod(idx, src, src2, dst, dst2)
    torch.testing.assert_close(dst, want, rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(dst2.float(), want2, rtol=0, atol=0)


def test_atomic_addx4_of_two_dtypes_is_a_diagnostic_naming_them():
    from tilelang_core.diagnostics import CompileError

    src = ATOMIC_ADDX.replace("DT", "float32").replace('s = T.alloc_shared((8, 16), "float32")',
                                                       's = T.alloc_shared((8, 16), "float16")')
    with pytest.raises(CompileError, match=r"T.atomic_addx4 adds 4 adjacent .* \(got float32 and float16\)"):
        build_src(src)


@pytest.mark.nvcc
@pytest.mark.parametrize("name", ["POW2_CEIL", "ATOMIC_ADDX", "COMPACT"])
def test_the_same_kernels_lower_and_compile_for_sm90a(name):
    import textwrap

    from tilelang_core.check import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    res = check_source(textwrap.dedent(globals()[name].replace("DT", "bfloat16")), "<test>")
    assert compile_cubin(generate(res.kernels[0], "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


# deepseek_v32/topk_selector.py: a thread-level kernel whose helper binds chained lets (`hval`, then `bits` from it)
# in one phase, and compacts with the previous value of T.atomic_add(..., return_prev=True)
COMPACT = """
import tilelang
import tilelang.language as T


def key8(x):
    hval = T.cast(x, T.float16)
    bits = T.reinterpret(hval, T.uint16)
    bits = T.if_then_else(x < 0, ~bits & 0xFFFF, bits | 0x8000)
    return bits >> 8


@T.prim_func
def compact(X: T.Tensor((2, 1000), "float32"), Hist: T.Tensor((2, 256), "int32"), Out: T.Tensor((2, 1000), "int32"),
            Count: T.Tensor((2,), "int32")):
    with T.Kernel(2, threads=128) as bx:
        tx = T.get_thread_binding()
        s_hist = T.alloc_shared([256], "int32")
        s_count = T.alloc_shared([1], "int32")
        pos = T.alloc_var("int32")
        T.fill(s_hist, 0)
        T.fill(s_count, 0)
        T.sync_threads()
        for s in T.serial(T.ceildiv(1000, 128)):
            i = s * 128 + tx
            if i < 1000:
                T.atomic_add(s_hist[key8(X[bx, i])], 1)
                if X[bx, i] > 0:
                    pos = T.atomic_add(s_count[0], 1, return_prev=True)
                    Out[bx, pos] = i
        T.sync_threads()
        for k in T.serial(2):
            if tx * 2 + k < 256:
                Hist[bx, tx * 2 + k] = s_hist[tx * 2 + k]
        if tx == 0:
            Count[bx] = s_count[0]
"""


def test_thread_level_chained_lets_and_return_prev_compaction_match_torch():
    mod = build_src(COMPACT)
    x = torch.randn(2, 1000, generator=torch.Generator().manual_seed(1))
    hist, out = torch.zeros(2, 256, dtype=torch.int32), torch.full((2, 1000), -1, dtype=torch.int32)
    count = torch.zeros(2, dtype=torch.int32)
    mod(x, hist, out, count)
    bits = x.half().view(torch.int16).int() & 0xFFFF
    key = torch.where(x < 0, ~bits & 0xFFFF, bits | 0x8000) >> 8
    for b in range(2):
        assert torch.equal(hist[b], torch.bincount(key[b], minlength=256).int())
        want = (x[b] > 0).nonzero().flatten().int()
        assert int(count[b]) == want.numel()
        assert torch.equal(out[b, :want.numel()].sort().values, want)  # each caller got its own slot


def test_fp4_output_of_act_quant_is_packed_two_a_byte():
    """deepseek_v4/act_quant.py's fp4 kernel stopped in TVM's LLVM build with an internal check message; an fp4
    tensor is now bytes holding two values each (low nibble first, as torch.float4_e2m1fn_x2)."""
    from tilelang_core.language.cast_rounding import cast

    src = """
import tilelang
import tilelang.language as T


@T.prim_func
def quant(X: T.Tensor((32, 32), "float32"), Q: T.Tensor((32, 32), "float4_e2m1fn")):
    with T.Kernel(1, threads=32) as bx:
        for i, j in T.Parallel(32, 32):
            Q[i, j] = T.clamp(X[i, j], -6.0, 6.0)
"""
    x = torch.randn(32, 32, generator=torch.Generator().manual_seed(1)) * 4
    q = torch.zeros(32, 16, dtype=torch.uint8)
    build_src(src)(x, q)
    codes = torch.stack([q & 0xF, q >> 4], -1).reshape(32, 32).long()
    mags = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6])
    got = torch.where(codes >= 8, -mags[codes & 7], mags[codes & 7])
    want = torch.tensor([[cast(float(v), "float4_e2m1fn") for v in row] for row in x.clamp(-6, 6)])
    assert torch.equal(got, want)


# deepseek_v32/fp8_lighting_indexer.py: a T.dynamic dim used in a product by the first tensor, bare in a later one
DIM_BOUND_LATER = """
import tilelang
import tilelang.language as T


@tilelang.jit(target="cpu")
def rows_sum(Q, W, heads=4):
    seq_len = T.dynamic("seq_len")
    Q: T.Tensor([seq_len * heads], "float32")
    W: T.Tensor([seq_len], "float32")
    Out = T.empty([seq_len], "float32")
    with T.Kernel(T.ceildiv(seq_len, 32), threads=32) as bx:
        for i in T.Parallel(32):
            if bx * 32 + i < seq_len:
                acc = T.alloc_var("float32")
                acc = W[bx * 32 + i]
                for h in T.serial(heads):
                    acc += Q[(bx * 32 + i) * heads + h]
                Out[bx * 32 + i] = acc
    return Out
"""


def test_dynamic_dim_first_used_in_a_product_is_bound_from_a_later_tensor(run_aliased):
    rows_sum = run_aliased("dim_bound_later", DIM_BOUND_LATER)["rows_sum"]
    q, w = torch.randn(50 * 4), torch.randn(50)
    torch.testing.assert_close(rows_sum(q, w), w + q.view(50, 4).sum(1), rtol=1e-5, atol=1e-5)


# deepseek_v4/act_quant.py (round_scale=False): its own check fails on the CPU and would on a GPU too, because the
# kernel's scale is amax * fp32(1 / 448), one ulp above torch's amax / 448, which moves exact fp8 ties (x / s = 152
# between 144 and 160) down. The backend must compute the kernel's own fp32 arithmetic, ties to even included.
FP8_QUANT = """
import tilelang
import tilelang.language as T


@T.prim_func
def quant(X: T.Tensor((4, 128), "bfloat16"), Q: T.Tensor((4, 128), "float8_e4m3fn"), S: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((4, 128), "bfloat16")
        amax = T.alloc_fragment((4,), "float32")
        s = T.alloc_fragment((4,), "float32")
        T.copy(X, x)
        T.reduce_absmax(x, amax, dim=1)
        for i in T.Parallel(4):
            s[i] = T.max(amax[i], 1e-4) * (1 / 448.0)
            S[i] = s[i]
        for i, j in T.Parallel(4, 128):
            Q[i, j] = T.clamp(x[i, j] / s[i], -448.0, 448.0)
"""


def test_fp8_quant_is_the_kernels_own_fp32_arithmetic_ties_to_even():
    mod = build_src(FP8_QUANT)
    x = torch.randn(4, 128, generator=torch.Generator().manual_seed(42)).bfloat16()
    x[0, :2] = torch.tensor([3.0625, 1.0390625])  # amax 3.0625: 1.0390625 / s is 151.99998 here, 152 in torch's ref
    q, s = torch.empty(4, 128, dtype=torch.float8_e4m3fn), torch.empty(4)
    mod(x, q, s)
    amax = x.float().abs().amax(1).clamp(min=1e-4)
    s_kernel = amax * torch.tensor(1 / 448.0, dtype=torch.float32)
    q_kernel = (x.float() / s_kernel[:, None]).clamp(-448, 448).to(torch.float8_e4m3fn)
    assert torch.equal(s, s_kernel) and torch.equal(q.float(), q_kernel.float())
    assert q[0, 1].float() == 144 and (x[0, 1].float() / (amax[0] / 448)).to(torch.float8_e4m3fn).float() == 160
