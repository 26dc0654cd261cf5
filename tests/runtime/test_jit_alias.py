"""`import tilelang` → tilelang_core: the alias in-process, its real-package guard, and
`python -m tilelang_core.run` on an unmodified TileLang file."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from tests.conftest import ROOT


@pytest.fixture
def alias():
    from tilelang_core import alias as A

    saved_path = list(sys.path)
    A.uninstall_alias()
    yield A
    A.uninstall_alias()
    sys.path[:] = saved_path


def test_import_forms_resolve_to_tilelang_core(alias):
    assert alias.install_alias(force=True)
    import tilelang
    import tilelang.language as T
    import tilelang.testing  # noqa: F401
    from tilelang import language as T2
    from tilelang.jit import jit as jit_fn

    import tilelang_core.language
    from tilelang_core.runtime import jit as J

    assert T is T2 is tilelang_core.language
    assert T.float16 == "float16"
    assert tilelang.jit(out_idx=[-1])(lambda M: None).__class__ is J.JITFactory  # still the decorator
    assert jit_fn is J.jit and tilelang.compile is J.compile
    assert callable(tilelang.testing.torch_assert_close)
    assert callable(tilelang.layout.make_swizzled_layout)


def test_helper_modules_used_by_tilelang_examples(alias):
    alias.install_alias(force=True)
    import tilelang
    from tilelang.profiler import do_bench

    assert tilelang.cdiv(10, 4) == 3 and tilelang.math.next_power_of_2(33) == 64
    assert tilelang.next_power_of_2(1) == 1
    calls = []
    assert do_bench(lambda: calls.append(1), warmup=5, rep=10) >= 0.0 and len(calls) >= 2

    key = tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED
    assert key == "tl.disable_warp_specialized"


def test_unknown_submodule_is_an_import_error(alias):
    alias.install_alias(force=True)
    with pytest.raises(ImportError):
        import tilelang.no_such_module  # noqa: F401


def test_real_tilelang_wins_unless_forced(alias, tmp_path):
    fake = tmp_path / "tilelang"
    fake.mkdir()
    (fake / "__init__.py").write_text("REAL = True\n")
    sys.path.insert(0, str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert alias.install_alias() is False
    assert any("real 'tilelang'" in str(w.message) for w in caught)
    assert alias.install_alias(force=True) is True
    import tilelang

    assert not hasattr(tilelang, "REAL") and tilelang.__tilelang_core_alias__


UNMODIFIED = '''
import sys
import torch
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale_add(M, N, block_M=16, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], tile)
            for i, j in T.Parallel(block_M, N):
                tile[i, j] = tile[i, j] * 2 + 1
            T.copy(tile, B[bx * block_M, 0])
    return main


if __name__ == "__main__":
    m = int(sys.argv[1])
    kernel = scale_add(m, 24)
    a = torch.randn(m, 24)
    torch.testing.assert_close(kernel(a), a * 2 + 1)
    print("ran", m, kernel.target)
'''


@pytest.mark.tvm
def test_run_module_executes_an_unmodified_file(tmp_path):
    path = tmp_path / "user_kernel.py"
    path.write_text(textwrap.dedent(UNMODIFIED))
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-m", "tilelang_core.run", str(path), "45"], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ran 45 cpu" in out.stdout


def test_run_module_usage_errors():
    from tilelang_core.run import main

    assert main([]) == 2
    assert main(["/no/such/file.py"]) == 2
