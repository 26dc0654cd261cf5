"""T.atomic_add(out, shared_tile, use_tma=True): the reduce-add runs on the CPU backend (uint64 and a 24-column float
tile), compiles for sm_90a, and what TileLang refuses is refused at the call with a CompileError that is also
tvm.error.InternalError (an unsupported dtype; a target before sm_90)."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source
from tilelang_core.diagnostics import CompileError

SRC = """
import tilelang.language as T

@T.prim_func
def k(out: T.Tensor((16, 24), T.{dt})):
    with T.Kernel(1):
        s = T.alloc_shared((16, 24), T.{dt})
        T.fill(s, 1)
        for _ in range(4):
            T.atomic_add(out, s, use_tma=True)
"""


def _check(dt: str):
    return check_source(textwrap.dedent(SRC.format(dt=dt)), "<test>")


def _kernel(dt: str):
    res = _check(dt)
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.tvm
@pytest.mark.parametrize("dt", ["uint64", "float32", "bfloat16"])
def test_a_tma_atomic_add_adds_the_tile_on_the_cpu(dt):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    out = torch.full((16, 24), 3, dtype=getattr(torch, dt))
    cpu.build(_kernel(dt))(out)
    assert torch.equal(out, torch.full_like(out, 7))


@pytest.mark.tvm
@pytest.mark.nvcc
def test_a_tma_atomic_add_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    for dt in ("float32", "uint64"):
        src = generate(_kernel(dt), "sm_90a").source
        assert "tl::atomic_add(" in src and compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.parametrize("dt", ["int16", "int64", "float64"])
def test_an_unsupported_dtype_is_refused_at_the_call(dt):
    errs = _check(dt).errors
    assert errs and errs[0].code == "tma-atomic-unsupported" and errs[0].span.line == 10
    assert f"TMA atomic add does not support dtype {dt}" in errs[0].message


@pytest.mark.tvm
def test_the_refusals_are_tvm_internal_errors_once_tvm_is_imported():
    tvm = pytest.importorskip("tvm")
    from tilelang_core.lowering import lower

    with pytest.raises(tvm.error.InternalError, match="does not support dtype int16.*supported scalar dtypes"):
        raise CompileError(_check("int16").errors)
    with pytest.raises(tvm.error.InternalError, match=r"requires a CUDA target with TMA support \(SM90\+\)"):
        lower(_kernel("float32"), target="sm_80")


SWIZZLED = """
import tilelang
import tilelang.language as T

@T.prim_func
def k(out: T.Tensor((16, 16), T.{dt})):
    with T.Kernel(1):
        s = T.alloc_shared((16, 16), T.{dt})
        T.annotate_layout({{s: tilelang.layout.make_wgmma_swizzled_layout(s)}})
        T.fill(s, 1)
        T.atomic_add(out, s, use_tma=True)
"""


@pytest.mark.tvm
def test_a_swizzled_64_bit_source_cannot_be_encoded_for_cuda():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    res = check_source(textwrap.dedent(SWIZZLED.format(dt="uint64")), "<test>")
    with pytest.raises(LoweringError, match="not representable by a TensorMap descriptor") as err:
        generate(res.kernels[0], "sm_90a")
    assert err.value.span.line == 11
    assert "tl::atomic_add(" in generate(check_source(textwrap.dedent(SWIZZLED.format(dt="float32")),
                                                      "<test>").kernels[0], "sm_90a").source


def test_the_lowered_artifact_says_it_has_no_tvm_host_module():
    from tilelang_core.compat import UnsupportedFeatureError
    from tilelang_core.compat.engine import LoweredArtifact

    with pytest.raises(UnsupportedFeatureError, match="host_mod"):
        LoweredArtifact("sm_90a", "", [], None, {}).host_mod  # noqa: B018
