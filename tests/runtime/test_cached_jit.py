"""Cached kernels load without tvm: the CPU backend's shared library through ctypes, a CUDA artifact by key."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

KERNELS = textwrap.dedent('''
    import tilelang_core as tilelang
    import tilelang_core.language as T

    @tilelang.jit(out_idx=[-1], target=TARGET)
    def scale(N, block=64):
        @T.prim_func
        def main(A: T.Tensor((N,), T.float32), alpha: T.float32, B: T.Tensor((N,), T.float32)):
            with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                for i in T.Parallel(block):
                    if bx * block + i < N:
                        B[bx * block + i] = A[bx * block + i] * alpha
        return main
''')

RUN_CPU = textwrap.dedent('''
    import json, sys
    import torch
    sys.path.insert(0, sys.argv[1])
    from kernels import scale
    a = torch.arange(300, dtype=torch.float32)
    b = scale(300)(a, 2)
    print(json.dumps({"ok": bool(torch.equal(b, a * 2)), "tvm": sorted(m for m in sys.modules if m == "tvm"
                      or m.startswith("tvm."))[:3]}))
''')

RUN_CUDA = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from kernels import scale
    kernel = scale(300)
    print(json.dumps({"symbol": kernel._backend.artifact.kernel_symbol, "tvm": "tvm" in sys.modules}))
''')


def _write(tmp_path: Path, target: str) -> Path:
    folder = tmp_path / "src"
    folder.mkdir(exist_ok=True)
    (folder / "kernels.py").write_text(KERNELS.replace("TARGET", repr(target)))
    return folder


def _instance(folder: Path, n: int):
    """The IR of scale(n) from the kernels file in `folder`."""
    from tilelang_core.runtime.jit import to_ir

    sys.path.insert(0, str(folder))
    try:
        from kernels import scale  # noqa: PLC0415
        return to_ir(scale.factory(n), [-1], instance=f"scale(N={n}, block=64)", factory="scale")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("kernels", None)


def _snapshot(tmp_path: Path) -> Path:
    """A copy of tilelang_core: cache keys digest the compiler's sources, which must not change between runs."""
    root = tmp_path / "snapshot"
    if not root.exists():
        shutil.copytree(ROOT / "tilelang_core", root / "tilelang_core",
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(script: str, folder: Path, cache: Path) -> dict:
    env = dict(os.environ, TILELSP_CACHE_DIR=str(cache), PYTHONPATH=str(_snapshot(cache.parent)))
    out = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, env=env,
                         timeout=300, cwd=folder)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.tvm
def test_second_process_runs_the_cached_library_without_importing_tvm(tmp_path):
    folder, cache = _write(tmp_path, "cpu"), tmp_path / "cache"
    first = _run(RUN_CPU, folder, cache)
    assert first["ok"] and first["tvm"], "the first run builds with tvm"
    assert list(cache.rglob("*.so")) and list(cache.rglob("*.ll"))
    second = _run(RUN_CPU, folder, cache)
    assert second == {"ok": True, "tvm": []}


def test_a_cached_cuda_artifact_is_found_without_tvm(tmp_path):
    """The artifact is planted under the instance's key; the JIT must take it without lowering (no tvm)."""
    from tilelang_core.runtime.artifact import ir_key, nvcc_version
    from tilelang_core.runtime.cache import ArtifactCache, sha256

    folder, cache = _write(tmp_path, "sm_90a"), tmp_path / "cache"
    func = _instance(folder, 300)
    source, version = "// planted\n", nvcc_version()
    meta = {"name": "main", "kernel_symbol": "planted_kernel", "arch": "sm_90a", "grid": [5], "block": [64],
            "smem_bytes": 0, "params": [], "nvcc_version": version, "content_hash": sha256(source, "sm_90a", version)}
    ArtifactCache(cache).put(ir_key(func, "sm_90a"), meta, source, b"\x7fELF planted")
    assert _run(RUN_CUDA, folder, cache) == {"symbol": "planted_kernel", "tvm": False}


@pytest.mark.tvm
def test_a_corrupt_library_is_rebuilt(tmp_path):
    import torch

    from tilelang_core.runtime.cpu_artifact import cpu_cache, cpu_key, load_cpu_kernel

    func = _instance(_write(tmp_path, "cpu"), 100)
    store = cpu_cache(tmp_path / "cache")
    assert load_cpu_kernel(func, store).library is not None
    path = store.binary_path(cpu_key(func))
    broken = path.with_name("broken")
    broken.write_bytes(path.read_bytes()[:100])
    os.replace(broken, path)  # truncated (a new file: the loaded one stays mapped); the integrity check drops it
    kernel = load_cpu_kernel(func, store)
    a, b = torch.ones(100), torch.zeros(100)
    kernel(a, 3.0, b)
    assert torch.equal(b, a * 3) and kernel.library is not None and kernel.module is not None


@pytest.mark.tvm
def test_the_library_reports_the_kernel_error(tmp_path):
    import torch

    from tilelang_core.runtime.cpu_artifact import cpu_cache, load_cpu_kernel
    from tilelang_core.runtime.cpu_library import CpuLibraryError

    func = _instance(_write(tmp_path, "cpu"), 100)
    library = load_cpu_kernel(func, cpu_cache(tmp_path / "cache")).library
    with pytest.raises(CpuLibraryError, match="shape"):
        library(torch.ones(99), 1.0, torch.zeros(100))
