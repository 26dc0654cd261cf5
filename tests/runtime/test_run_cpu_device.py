"""`python -m tilelang_core.run` on a file written for a GPU: without one (or with --device cpu) it runs on the CPU
backend under the stand-in device (`runtime.cpu_device`), says so in one line, and a quiet run says what it does."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

CUDA_FILE = '''
import sys
import torch
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1], target="cuda")
def double(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2
    return main


if __name__ == "__main__":
    kernel = double(256)
    a = torch.randn(256, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a), a * 2)
    ms = tilelang.profiler.do_bench(lambda: kernel(a), warmup=500, rep=100)
    print("ok", kernel.target, torch.cuda.get_device_capability(), a.device.type, f"{ms:.3f}")
'''


def _run(tmp_path, *args, env_extra=None):
    path = tmp_path / "cuda_user.py"
    path.write_text(CUDA_FILE)
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "tilelang_core.run", *args, str(path)], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.tvm
def test_a_file_that_makes_cuda_tensors_runs_on_the_cpu_backend_with_one_line_saying_so(tmp_path):
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ok cpu (9, 0) cpu" in out.stdout
    notes = [line for line in out.stderr.splitlines()
             if line.startswith("tilelang_core.run:") and "no output for" not in line]  # a loaded machine is slow
    assert len(notes) == 1 and "no CUDA GPU here" in notes[0] and "CPU backend" in notes[0]


def test_device_cuda_without_a_gpu_is_refused_with_the_way_out(tmp_path, capsys):
    from tilelang_core.run import gpu_visible, main

    if gpu_visible():
        pytest.skip("a GPU is visible")
    path = tmp_path / "x.py"
    path.write_text("raise SystemExit('must not run')\n")
    assert main(["--device", "cuda", str(path)]) == 2
    err = capsys.readouterr().err
    assert "torch sees no CUDA GPU" in err and "--device cpu" in err


def test_run_usage_errors(tmp_path, capsys):
    from tilelang_core.run import main

    assert main(["--device", "tpu", "x.py"]) == 2
    assert "use auto, cpu or cuda" in capsys.readouterr().err
    assert main(["--device"]) == 2
    assert main([]) == 2
    assert main(["--help"]) == 0 and "--device auto|cpu|cuda" in capsys.readouterr().out


def test_a_quiet_run_says_what_it_is_doing(tmp_path):
    path = tmp_path / "quiet.py"
    path.write_text(textwrap.dedent('''
        import time

        def slow_reference():
            time.sleep(2.5)

        slow_reference()
        print("done")
    '''))
    code = ("import sys, runpy; from tilelang_core.runtime.quiet_watch import QuietWatch\n"
            "QuietWatch(sys.argv[1], quiet_s=1.0, prefix='watch').start()\n"
            "runpy.run_path(sys.argv[1], run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("watch: no output for")]
    assert lines and "in the file's own code, at quiet.py:5 in slow_reference" in lines[0]
    assert len(lines) <= 2  # then after twice as long, not every second


def test_route_kernels_to_cpu_keeps_target_errors():
    from tilelang_core.runtime import autotune, cpu_device, jit_kernel

    try:
        cpu_device.route_kernels_to_cpu()
        cpu_device.route_kernels_to_cpu()  # idempotent
        assert jit_kernel.machine_target("sm_90a").kind == "cpu" == autotune.machine_target("cuda").kind
        with pytest.raises(ValueError, match="tpu"):
            jit_kernel.machine_target("tpu")
    finally:
        cpu_device.route_kernels_to_cpu(False)
    assert jit_kernel.machine_target("sm_90a").kind == "cuda"


def test_timeout_ends_the_run_saying_what_it_was_doing(tmp_path):
    path = tmp_path / "forever.py"
    path.write_text("import time\n\n\ndef reference():\n    time.sleep(60)\n\n\nreference()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-m", "tilelang_core.run", "--device", "cpu", "--timeout", "3", str(path)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 124
    assert "stopped after 3 s (--timeout) while in the file's own code, at forever.py:5 in reference" in out.stderr


@pytest.mark.tvm
def test_a_kernel_call_is_named_with_its_input_shapes():
    import torch

    import tilelang_core.language as T
    from tilelang_core.runtime.jit import jit
    from tilelang_core.runtime.quiet_watch import describe

    @jit(out_idx=[-1], target="cpu")
    def inc(N, block=32):
        @T.prim_func
        def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
            with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = A[bx * block + i] + 1.0
        return main

    kernel = inc(64)
    seen = []
    kernel._backend.run = lambda args: seen.append(describe(sys._getframe(), __file__))
    kernel(torch.zeros(64))
    assert seen and seen[0].startswith("running kernel 'main' on the CPU backend (inputs 64)")
    assert "test_run_cpu_device.py:" in seen[0]


def test_a_missing_package_the_file_imports_is_named_in_one_line(tmp_path):
    path = tmp_path / "needs.py"
    path.write_text("import os\nimport no_such_package_for_tilelsp.sub\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-m", "tilelang_core.run", "--device", "cpu", str(path)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"tilelang_core.run: {path}:2 imports 'no_such_package_for_tilelsp'")
    assert last.endswith("pip install no_such_package_for_tilelsp")
