"""build_artifact end to end (tvm + nvcc): cubin, params, and a disk-cache hit that skips lowering."""
from __future__ import annotations

import time

import pytest

from tilelang_core import check_source
from tilelang_core.runtime.artifact import build_artifact
from tilelang_core.runtime.cache import ArtifactCache
from tests.conftest import EXAMPLES

pytestmark = [pytest.mark.tvm, pytest.mark.nvcc]


def test_build_then_cache_hit(tmp_path, monkeypatch):
    path = EXAMPLES / "elementwise_add.py"
    k = check_source(path.read_text(), str(path)).kernels[0]
    cache = ArtifactCache(tmp_path)
    art = build_artifact(k, "sm_80", cache=cache)
    assert art.cubin[:4] == b"\x7fELF" and art.kernel_symbol.endswith("_kernel")
    assert [p["kind"] for p in art.params].count("tensor") == 3
    import tilelang_core.codegen.cuda as cuda

    monkeypatch.setattr(cuda, "generate", lambda *a, **kw: pytest.fail("a cache hit must not lower again"))
    t0 = time.perf_counter()
    again = build_artifact(k, "sm_80", cache=cache)
    assert time.perf_counter() - t0 < 1.0
    assert again.cubin == art.cubin and again.content_hash == art.content_hash
