"""T.rng_init / T.rng_rand / T.rng_rand_float lower for sm_90a without curand_kernel.h (this toolkit has none):
our Philox4x32-10 device code with curand's state semantics, run on the host through nvcc and checked against
triton.language.randint4x's Philox output (what the rand example compares with)."""
from __future__ import annotations

import subprocess
import textwrap

import pytest

pytestmark = [pytest.mark.tvm, pytest.mark.nvcc]

# tl.randint4x(42, offset) for offsets 0, 1 and 32 (TRITON_INTERPRET=1), four words per offset, in order
TRITON_SEED42 = {0: [2632642643, 2012563771, 314527917, 1463989207], 1: [4242219303, 1404726525],
                 32: [2700622120, 1018086070, 3689554224, 2830907139, 1778550086, 49606125]}

HOST_MAIN = r"""
#include <cstdio>
%s
int main() {
  unsigned s[11];
  unsigned long long offsets[3] = {0ull, 128ull, 2ull};
  for (int b = 0; b < 3; ++b) {
    tl::philox_init(s, 42ull, 0ull, offsets[b]);
    for (int i = 0; i < 6; ++i) { unsigned v = tl::philox_next(s); printf("%%u ", v); }
    printf("\n");
  }
  tl::philox_init(s, 42ull, 0ull, 0ull);
  printf("%%.9g\n", tl::philox_uniform(s));
}
"""

KERNEL = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(target="sm_90a")
def rand(M=256, seed=42):
    A = T.empty((M,), "uint32")
    U = T.empty((M,), "float32")
    with T.Kernel(T.ceildiv(M, 128), threads=2) as bx:
        tx = T.get_thread_binding()
        T.rng_init(seed, 0, bx * 128 + tx * 64)
        for j in T.serial(64):
            A[bx * 128 + tx * 64 + j] = T.rng_rand()
        T.rng_init(seed)
        U[bx * 128 + tx * 64] = T.rng_rand_float()
    return A, U
'''


STREAMS = r"""
#include <cstdio>
#include <cstring>
%s
int main() {
  unsigned long long cases[4][3] = {{42ull, 0ull, 0ull}, {0x0123456789ABCDEFull, 4294967301ull, 17179869177ull},
                                    {7ull, 101ull, 3ull}, {1ull, 3ull, 17179869183ull}};
  unsigned s[11];
  for (int c = 0; c < 4; ++c) {
    tl::philox_init(s, cases[c][0], cases[c][1], cases[c][2]);
    for (int i = 0; i < 9; ++i) printf("%%u ", tl::philox_next(s));
    for (int i = 0; i < 3; ++i) { float f = tl::philox_uniform(s); unsigned b; memcpy(&b, &f, 4); printf("%%u ", b); }
    printf("\n");
  }
}
"""
STREAM_CASES = [(42, 0, 0), (0x0123456789ABCDEF, 4294967301, 17179869177), (7, 101, 3), (1, 3, 17179869183)]


def test_device_philox_draws_the_reference_stream(tmp_path):
    """The device functions, compiled for the host by nvcc, draw codegen/philox.py's stream bit for bit (64-bit
    seeds, subsequences and offsets, the counter's carry, curand_uniform's float bits)."""
    import struct

    from tilelang_core.codegen.cuda.rng import PHILOX
    from tilelang_core.codegen.philox import PhiloxStream

    (tmp_path / "streams.cu").write_text(STREAMS % PHILOX)
    subprocess.run(["nvcc", "-o", str(tmp_path / "streams"), str(tmp_path / "streams.cu")], check=True,
                   capture_output=True, timeout=300)
    lines = subprocess.run([str(tmp_path / "streams")], check=True, capture_output=True, text=True).stdout.split("\n")
    for line, (seed, seq, off) in zip(lines, STREAM_CASES):
        stream = PhiloxStream(seed, seq, off)
        want = stream.take(9) + [struct.unpack("<I", struct.pack("<f", stream.uniform()))[0] for _ in range(3)]
        assert [int(v) for v in line.split()] == want, (seed, seq, off)


def test_philox_matches_tritons_randint4x(tmp_path):
    from tilelang_core.codegen.cuda.rng import PHILOX

    (tmp_path / "philox.cu").write_text(HOST_MAIN % PHILOX)
    subprocess.run(["nvcc", "-o", str(tmp_path / "philox"), str(tmp_path / "philox.cu")], check=True,
                   capture_output=True, timeout=300)
    lines = subprocess.run([str(tmp_path / "philox")], check=True, capture_output=True, text=True).stdout.split("\n")
    first, block32, shifted = ([int(v) for v in ln.split()] for ln in lines[:3])
    assert first == TRITON_SEED42[0] + TRITON_SEED42[1]
    assert block32 == TRITON_SEED42[32]                      # offset 128 skips 32 counters
    assert shifted[:4] == TRITON_SEED42[0][2:] + TRITON_SEED42[1]  # offset 2: the rest of counter 0, then counter 1
    assert float(lines[3]) == pytest.approx(2632642643 * 2.0 ** -32, abs=1e-7)  # curand_uniform: float32 math


def test_rand_kernel_lowers_without_curand(tmp_path):
    import runpy

    path = tmp_path / "rand_kernel.py"
    path.write_text(textwrap.dedent(KERNEL))
    kernel = runpy.run_path(str(path), run_name="rand_kernel")["rand"].compile(M=256)
    src = kernel.get_kernel_source()
    assert "curand" not in src and "tl::philox_next(" in src and src.count("tl::philox_init(") == 2


TWO_D = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(target="sm_90a")
def rand2d(seed=7):
    A = T.empty((2, 64, 2), "uint32")
    with T.Kernel(2, threads=(32, 2)) as bx:
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        T.rng_init(seed)
        v = T.rng_rand()
        A[bx, ty * 32 + tx, 0] = v
        A[bx, ty * 32 + tx, 1] = v + v
    return A
'''


def test_default_subsequence_and_a_let_bound_draw(tmp_path):
    """T.rng_init(seed) takes threadIdx.x + blockIdx.x * blockDim.x as TileLang does (threadIdx.x of the flat launch
    is tx % 32 here), and `v = T.rng_rand()` draws once however often v is read (it was substituted at each use)."""
    import runpy

    path = tmp_path / "rand2d.py"
    path.write_text(textwrap.dedent(TWO_D))
    src = runpy.run_path(str(path), run_name="rand2d")["rand2d"].compile().get_kernel_source()
    body = src.split("__global__", 2)[2]
    assert "(((int)blockIdx.x) * 32) + (((int)threadIdx.x) & 31)" in body
    assert body.count("tl::philox_next(") == 1 and "uint v = tl::philox_next(" in body
