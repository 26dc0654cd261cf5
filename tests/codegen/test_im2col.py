"""T.im2col: the (block_M, block_K) tile of the unfolded patch matrix of an NHWC image, padding read as zero;
run on the CPU backend against torch's unfold and lowered for sm_90a with nvcc."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang_core as tilelang
import tilelang_core.language as T


def unfold(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory(n, h, w, c, k, s, d, p, block_m=24, block_k=12, dtype="float16"):
        oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
        ow = (w + 2 * p - d * (k - 1) - 1) // s + 1

        @T.prim_func
        def main(img: T.Tensor((n, h, w, c), dtype), col: T.Tensor((n * oh * ow, k * k * c), dtype)):
            with T.Kernel(T.ceildiv(n * oh * ow, block_m), threads=128) as by:
                tile = T.alloc_shared((block_m, block_k), dtype)
                for kk in T.serial(T.ceildiv(k * k * c, block_k)):
                    T.im2col(img, tile, by, kk, k, s, d, p)
                    T.copy(tile, col[by * block_m, kk * block_k])
        return main
    return factory
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("im2col") / "im2col_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return runpy.run_path(str(path), run_name="im2col_kernels")


def _reference(x, k, s, d, p):
    n, h, w, c = x.shape
    cols = torch.nn.functional.unfold(x.permute(0, 3, 1, 2).float(), k, dilation=d, padding=p, stride=s)
    length = cols.shape[-1]
    return cols.reshape(n, c, k, k, length).permute(0, 4, 2, 3, 1).reshape(n * length, k * k * c).to(x.dtype)


@pytest.mark.parametrize("s, d, p", [(1, 1, 1), (2, 1, 0), (1, 2, 2)])
def test_im2col_matches_torch_unfold_on_the_cpu_backend(mod, s, d, p):
    n, h, w, c, k = 2, 8, 8, 4, 3
    oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
    block_m = next(b for b in (24, 16, 6) if n * oh * oh % b == 0)  # the real op reads rows past M unguarded
    x = torch.randn(n, h, w, c).to(torch.float16)
    got = mod["unfold"]("cpu")(n, h, w, c, k, s, d, p, block_m=block_m)(x)
    torch.testing.assert_close(got, _reference(x, k, s, d, p))


@pytest.mark.nvcc
def test_im2col_compiles_for_sm90a(mod):
    kernel = mod["unfold"]("sm_90a")(2, 8, 8, 4, 3, 1, 1, 1)
    assert kernel.arch == "sm_90a" and "__global__" in kernel.get_kernel_source()
