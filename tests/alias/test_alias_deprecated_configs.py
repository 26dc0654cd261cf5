"""A deprecated pass config (`tl.disable_tma_lower`) warns at the JIT entry, as TileLang's does, and still applies;
`tilelang.jit.kernel.JITKernel` is the JIT's kernel class."""
from __future__ import annotations

import warnings

import pytest

pytestmark = pytest.mark.tvm


def _kernel(T):
    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8):
            for i in T.Parallel(8):
                B[i] = A[i] * 2.0

    return main


def _deprecations(build) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        build()
    return [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def test_disable_tma_lower_warns_at_the_jit_entry(tilelang):
    import tilelang.language as T
    from tilelang.jit.kernel import JITKernel

    assert JITKernel is tilelang.JITKernel
    configs = {tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True}
    (message,) = _deprecations(lambda: tilelang.compile(_kernel(T), target="c", pass_configs=configs))
    assert "tl.disable_tma_lower" in message and "v0.1.10" in message and "disable_tma=True" in message
    with pytest.warns(DeprecationWarning, match="tl.disable_tma_lower"):
        kernel = JITKernel(_kernel(T), target="c", pass_configs={"tl.disable_tma_lower": True})
    assert kernel.pass_configs == {"tl.disable_tma_lower": True}  # still honoured
    other = {"tl.disable_wgmma": True}
    assert _deprecations(lambda: tilelang.compile(_kernel(T), target="c", pass_configs=other)) == []


def test_a_kernel_from_tilelangs_database_is_refused_after_the_warning(tilelang):
    from tilelang.jit.kernel import JITKernel
    from tilelang_core.compat import UnsupportedFeatureError

    with pytest.warns(DeprecationWarning, match="v0.1.10"), pytest.raises(UnsupportedFeatureError,
                                                                          match="from_database"):
        JITKernel(from_database=True, target="c", pass_configs={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True})
    with pytest.raises(TypeError, match="needs the kernel"):
        JITKernel(target="c")
