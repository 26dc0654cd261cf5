"""One corpus file, run as `__main__` on tilelang_core under the GPU shim; writes what happened as JSON.

Usage: python benchmarks/corpus_child.py --mode cuda|cpu|gpu-build|gpu-build-only --out RESULT.json [--entry CALL] FILE
cuda: every kernel build is lowered for sm_90a and compiled with nvcc; the run stops after the first kernel
      (as the reference measurement of the real TileLang did); a kernel the file only takes as IR (`get_tir`, for
      TileLang's Analyzer) is lowered and compiled as well, and the file goes on. cpu: kernels build for the CPU backend and run,
      so the file's own result checks run to the end of its main(). gpu-build: every kernel is built as an sm_90a
      artifact into the disk cache (TILELSP_CACHE_DIR) and run on the CPU backend, so that the same file run on a
      GPU machine finds every kernel it builds in that cache (benchmarks/gpu_corpus.py). gpu-build-only: the same
      artifacts, but no kernel runs on the CPU and result checks (torch's assert_close / allclose, the profiler's
      assert_allclose) pass unexamined, so a file with full-size kernels builds them all in seconds; its outputs are
      meaningless, its builds are those of the real run unless a later kernel's shape depends on an earlier result.
--entry CALL runs the file under another module name and then evaluates CALL (say `main(do_bench=False)`) in it.
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class FirstKernelDone(BaseException):
    """Stops the file after its first kernel was built (cuda mode); escapes the file's `except Exception`."""


def _record_kernel(result: dict, func, **extra) -> None:
    result["kernels"].append({"name": func.name, "instance": getattr(func, "instance", ""), **extra})


def _patch_cuda(result: dict, cuda_out: Path | None) -> None:
    from tilelang_core.runtime import artifact, jit_kernel
    from tilelang_core.target import Target

    jit_kernel.machine_target = lambda target=None: Target("cuda", "sm_90a")

    class ShimCudaBackend:
        """Lower for sm_90a and compile with nvcc; nothing is launched."""

        def __init__(self, func, arch):
            t0 = time.perf_counter()
            try:
                art = artifact.build_artifact(func, "sm_90a")
            except artifact.NvccError as exc:
                _record_kernel(result, func, ok=False, stage="nvcc", error=str(exc)[-2000:])
                raise FirstKernelDone() from None
            _record_kernel(result, func, ok=True, seconds=round(time.perf_counter() - t0, 2),
                           cubin_bytes=len(art.cubin))
            if cuda_out is not None:
                cuda_out.write_text(art.source)
            raise FirstKernelDone()

    jit_kernel._CudaBackend = ShimCudaBackend

    from tilelang_core.runtime import eager

    get_tir = eager.EagerKernel.get_tir

    def get_tir_lowered(self, **values):
        """A kernel the file only analyses (TileLang's Analyzer) is lowered and compiled too; the file goes on."""
        func = get_tir(self, **values)
        t0 = time.perf_counter()
        try:
            art = artifact.build_artifact(func, "sm_90a")
        except artifact.NvccError as exc:
            _record_kernel(result, func, ok=False, stage="nvcc", error=str(exc)[-2000:])
            raise FirstKernelDone() from None
        _record_kernel(result, func, ok=True, seconds=round(time.perf_counter() - t0, 2), cubin_bytes=len(art.cubin))
        return func

    eager.EagerKernel.get_tir = get_tir_lowered


def _patch_gpu_build(result: dict) -> None:
    from tilelang_core.runtime import artifact, jit_kernel

    _patch_cpu(result)
    cpu_backend = jit_kernel._CpuBackend

    class ArtifactAndCpuBackend(cpu_backend):
        """Build (and cache) the sm_90a artifact, then run on the CPU backend so the file goes on."""

        def __init__(self, func):
            artifact.build_artifact(func, "sm_90a")
            super().__init__(func)

    jit_kernel._CpuBackend = ArtifactAndCpuBackend


def _patch_gpu_build_only(result: dict) -> None:
    import torch

    from tilelang_core.runtime import jit_kernel, profiler

    _patch_gpu_build(result)
    built = jit_kernel._CpuBackend

    class ArtifactOnly(built):
        """Build the artifact and the CPU library, launch nothing."""

        def run(self, args):
            self.entry["runs"] += 1

    jit_kernel._CpuBackend = ArtifactOnly
    torch.testing.assert_close = lambda *a, **k: None
    torch.allclose = lambda *a, **k: True
    profiler.Profiler.assert_allclose = lambda *a, **k: None


def _patch_cpu(result: dict) -> None:
    from tilelang_core.runtime import cpu_device, jit_kernel, profiler, timing

    cpu_device.route_kernels_to_cpu()
    base = jit_kernel._CpuBackend

    class CountingCpuBackend(base):
        """The CPU backend, counting builds and launches."""

        def __init__(self, func):
            super().__init__(func)
            _record_kernel(result, func, ok=True)
            self.entry = result["kernels"][-1]
            self.entry["runs"] = 0

        def run(self, args):
            super().run(args)
            self.entry["runs"] += 1

    jit_kernel._CpuBackend = CountingCpuBackend

    def one_run_bench(fn, *args, **kwargs):
        """Benchmarks are not the point on the CPU backend: run once, return the milliseconds."""
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3

    timing.do_bench = profiler.do_bench = lambda fn, *a, **k: one_run_bench(fn)


def _frames(tb) -> list[dict]:
    return [{"file": f.filename, "line": f.lineno, "func": f.name} for f in traceback.extract_tb(tb)]


def _describe(exc: BaseException) -> dict:
    from tilelang_core.diagnostics import CompileError

    info = {"type": type(exc).__name__, "message": str(exc)[:600], "frames": _frames(exc.__traceback__)[-12:]}
    if isinstance(exc, CompileError):
        info["diagnostics"] = [{"code": d.code, "line": d.span.line, "col": d.span.col + 1,
                                "file": d.span.path if hasattr(d.span, "path") else exc.path,
                                "message": d.message[:300]} for d in exc.diagnostics if d.is_error]
        info["path"] = exc.path
    return info


def run(path: Path, mode: str, cuda_out: Path | None, entry: str | None = None) -> dict:
    """Run `path` as __main__ from its folder; the result dict says how far it got."""
    result: dict = {"file": str(path), "mode": mode, "kernels": [], "status": "finished", "error": None}
    sys.path.insert(0, os.environ.get("TILELSP_CORE_ROOT", str(ROOT)))  # gpu_corpus builds from a snapshot
    import tilelang_core

    tilelang_core.install_alias(force=True)
    from tilelang_core.runtime import cpu_device

    cpu_device.install()
    {"cuda": lambda: _patch_cuda(result, cuda_out), "cpu": lambda: _patch_cpu(result),
     "gpu-build": lambda: _patch_gpu_build(result),
     "gpu-build-only": lambda: _patch_gpu_build_only(result)}[mode]()
    os.chdir(path.parent)
    sys.path.insert(0, str(path.parent))
    sys.argv = [str(path)]
    t0 = time.perf_counter()
    try:
        if entry is None:
            runpy.run_path(str(path), run_name="__main__")
        else:
            eval(entry, runpy.run_path(str(path), run_name="__corpus_entry__"))  # noqa: S307 -- a harness's own call
    except FirstKernelDone:
        result["status"] = "first-kernel"
    except SystemExit as exc:
        result["status"] = "exit" if exc.code not in (None, 0) else "finished"
        result["exit_code"] = exc.code if isinstance(exc.code, int) else str(exc.code)
    except BaseException as exc:  # noqa: BLE001 -- every outcome of user code is data here
        result["status"] = "exception"
        result["error"] = _describe(exc)
    result["seconds"] = round(time.perf_counter() - t0, 2)
    return result


def main() -> int:
    """Parse arguments, run the file, write the JSON."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("cuda", "cpu", "gpu-build", "gpu-build-only"), required=True)
    ap.add_argument("--entry", default=None, help="a call to evaluate in the file's namespace instead of __main__")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cuda-out", default=None)
    ap.add_argument("file")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    cuda_out = Path(args.cuda_out).resolve() if args.cuda_out else None
    result = run(Path(args.file).resolve(), args.mode, cuda_out, args.entry)
    out.write_text(json.dumps(result, indent=1, default=str))
    sys.stdout.flush()
    os._exit(0)  # threads the file started must not keep the process alive


if __name__ == "__main__":
    main()
