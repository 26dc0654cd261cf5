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
