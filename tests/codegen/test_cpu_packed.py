"""Packed sub-byte tensors (language/packing.py, codegen/cpu/packed.py): int4/uint4/fp4 element reads and writes on
the CPU backend against torch, logical shapes bound from byte shapes (a symbolic last dim too), packed outputs
allocated with torch's storage dtype, and what is refused (tile ops on the CPU, element writes on CUDA)."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src
from thread_kernels import kernel_of

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

E2M1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def unpack(q: torch.Tensor, signed: bool = False) -> torch.Tensor:
    """The 4-bit codes of a byte tensor, low nibble first (sign-extended when `signed`)."""
    b = q.view(torch.uint8).long()
    codes = torch.stack([b & 0xF, b >> 4], -1).reshape(*b.shape[:-1], -1)
    return torch.where(codes >= 8, codes - 16, codes) if signed else codes


INT4 = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((4, 16), T.int4), B: T.Tensor((4, 16), T.int32), C: T.Tensor((4, 16), T.uint4)):
    with T.Kernel(4, threads=32) as bx:
        for j in T.serial(16):
            B[bx, j] = A[bx, j] * 3
            C[bx, 15 - j] = A[bx, j] + 8
"""


def test_int4_reads_sign_extend_and_uint4_writes_keep_the_other_nibble():
    a = torch.randint(0, 256, (4, 8), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    b, c = torch.zeros(4, 16, dtype=torch.int32), torch.zeros(4, 8, dtype=torch.uint8)
    build_src(INT4)(a, b, c)
    vals = unpack(a, signed=True)
    assert torch.equal(b, (vals * 3).int())
    assert torch.equal(unpack(c), (vals + 8).flip(-1))


FP4 = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((m, n), T.float4_e2m1fn), B: T.Tensor((m, n), T.float32), C: T.Tensor((m, n), T.float4_e2m1fn)):
    with T.Kernel(m, threads=32) as bx:
        for j in T.serial(n):
            B[bx, j] = A[bx, j]
            C[bx, j] = A[bx, j] * 1.5
"""


def test_fp4_decode_and_round_to_nearest_even_with_a_symbolic_last_dim():
    src = "m = T.dynamic('m')\nn = T.dynamic('n')\n"
    mod = build_src(FP4.replace("@T.prim_func", src + "\n@T.prim_func"))
    a = torch.arange(256, dtype=torch.uint8).reshape(8, 32)
    b, c = torch.zeros(8, 64), torch.zeros(8, 32, dtype=torch.uint8)
    mod(a, b, c)
    vals = E2M1[unpack(a)]
    assert torch.equal(b, vals)
    # 1.5 * each value, to nearest with ties to the even code, saturating at 6: checked against the host T.cast
    from tilelang_core.language.cast_rounding import cast

    want = torch.tensor([[cast(float(v) * 1.5, "float4_e2m1fn") for v in row] for row in vals])
    assert torch.equal(E2M1[unpack(c)], want)


def fixed(src: str) -> str:
    """FP4 with m = 4 and n = 32."""
    return src.replace("(m, n)", "(4, 32)").replace("T.Kernel(m,", "T.Kernel(4,").replace("T.serial(n)", "T.serial(32)")


def test_jit_binds_logical_shapes_and_allocates_packed_outputs():
    from tilelang_core import check_source
    from tilelang_core.runtime.jit import compile as jit_compile

    kernel = jit_compile(check_source(fixed(FP4), "<test>").kernels[0], out_idx=[-1], target="cpu")
    a = torch.randint(0, 256, (4, 16), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    b = torch.zeros(4, 32)
    c = kernel(a, b)
    assert c.dtype == torch.float4_e2m1fn_x2 and tuple(c.shape) == (4, 16)
    assert torch.equal(b, E2M1[unpack(a)])
    with pytest.raises(ValueError, match=r"has shape \(4, 64\) but the kernel expects \(4, 32\)"):
        kernel(torch.zeros(4, 32, dtype=torch.uint8), b)
    with pytest.raises(TypeError, match="passed packed as one of uint8, int8, float4_e2m1fn_x2"):
        kernel(torch.zeros(4, 16, dtype=torch.float16), b)


def test_tile_ops_on_packed_tensors_are_refused_at_their_line():
    from tilelang_core.diagnostics import CompileError

    src = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((4, 32), T.float4_e2m1fn), B: T.Tensor((4, 32), T.float4_e2m1fn)):
    with T.Kernel(1, threads=32) as bx:
        T.copy(A, B)
"""
    with pytest.raises(CompileError) as err:
        build_src(src)
    d = err.value.diagnostics[0]
    assert d.code == "lowering-unsupported" and "one element at a time" in d.message and d.span.line == 7


@pytest.mark.nvcc
def test_cuda_reads_and_writes_fp4_elements_and_refuses_int4():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(fixed(FP4)), "sm_90a")
    assert ">> ((" in ck.source and "& 0xF" in ck.source  # the element's nibble of its byte
    assert "tl::store_fp4(" in ck.source  # a write keeps the byte's other element
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"
    with pytest.raises(LoweringError, match="sub-byte integer tensors"):
        generate(kernel_of(INT4), "sm_90a")


def test_sanitized_run_of_a_packed_output_reports_nothing_for_a_correct_kernel():
    from tilelang_core import check_source
    from tilelang_core.runtime.jit import compile as jit_compile
    from tilelang_core.verify.sanitize import sanitize_kernel

    kernel = jit_compile(check_source(fixed(FP4), "<test>").kernels[0], out_idx=[-1], target="cpu")
    a = torch.randint(0, 256, (4, 16), dtype=torch.uint8)
    assert sanitize_kernel(kernel, [a, torch.zeros(4, 32)]) == []
