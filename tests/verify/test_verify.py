"""`tilelsp verify`: pass, mismatch (a wrong reference), timeout (a factory that never returns), usage errors;
plus the numerics helpers it relies on."""
from __future__ import annotations

import json
import textwrap
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

GOOD = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def axpy(N, block=32, dtype=T.float16):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), Z: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                Z[bx * block + i] = X[bx * block + i] * 3 + Y[bx * block + i]
    return main


@tilelang.jit(out_idx=[-1])
def negate(N, block=32):
    @T.prim_func
    def neg(X: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                Z[bx * block + i] = -X[bx * block + i]
    return neg


k1 = axpy(100)
k2 = negate(40)


# tilelsp: reference=reference
def reference(*tensors):
    if len(tensors) == 2:
        return tensors[0] * 3 + tensors[1]
    return tensors[0]  # wrong on purpose: negate's reference forgets the minus
'''

FOREVER = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def spin(N):
    while True:
        pass
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                Z[i] = X[i]
    return main


k = spin(8)
'''


def _args(path, **kw):
    base = dict(file=str(path), kernel=None, device="cpu", json=True, timeout=240.0, bench=False)
    base.update(kw)
    return SimpleNamespace(**base)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    path = tmp_path_factory.mktemp("verify") / "good.py"
    path.write_text(textwrap.dedent(GOOD))
    return path


@pytest.mark.tvm
def test_verify_pass_and_mismatch_in_one_run(good, capsys):
    from tilelsp.cli.verify import run_verify

    rc = run_verify(_args(good))
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    by_kernel = {r["kernel"]: r for r in lines}
    assert rc == 1  # one instance fails
    ok, bad = by_kernel["main"], by_kernel["neg"]
    assert ok["passed"] and ok["device"] == "cpu" and ok["max_abs_err"] <= 1e-2 and ok["time_ms"] > 0
    assert ok["instance"].startswith("axpy(N=100")
    assert not bad["passed"] and "differ" in bad["message"] and bad["max_abs_err"] > 1.0
    assert set(ok) >= {"file", "kernel", "instance", "device", "passed", "max_abs_err", "max_rel_err", "time_ms",
                       "message"}


@pytest.mark.tvm
def test_verify_selects_kernel_and_prints_text(good, capsys):
    from tilelsp.cli.verify import run_verify

    rc = run_verify(_args(good, kernel="axpy", json=False, bench=True))
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.startswith("PASS") and "axpy(N=100" in out and "bench" in out and "neg" not in out


def test_verify_timeout_is_a_clean_failure(tmp_path, capsys):
    from tilelsp.cli.verify import run_verify

    path = tmp_path / "forever.py"
    path.write_text(textwrap.dedent(FOREVER))
    rc = run_verify(_args(path, timeout=8.0))
    rec = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert rc == 1 and not rec["passed"] and "timed out after 8 s" in rec["message"]


@pytest.mark.parametrize("tail,words", [
    ("import ctypes\nctypes.string_at(0)\n", ["killed by signal", "SIGSEGV"]),
    ("raise RuntimeError('boom at load')\n", ["running the file failed", "boom at load", "forever.py:"]),
])
def test_verify_crash_and_load_errors_are_clean_failures(tmp_path, capsys, tail, words):
    from tilelsp.cli.verify import run_verify

    path = tmp_path / "forever.py"
    path.write_text(textwrap.dedent(FOREVER).replace("k = spin(8)\n", tail))
    rc = run_verify(_args(path, timeout=60.0))
    rec = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert rc == 1 and not rec["passed"]
    for w in words:
        assert w in rec["message"]


def test_verify_usage_errors(tmp_path, good, capsys):
    from tilelsp.cli.verify import run_verify

    assert run_verify(_args(tmp_path / "missing.py")) == 2
    assert run_verify(_args(good, kernel="nope", timeout=120.0)) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err


def test_reference_name_from_comment():
    from tilelang_core.runtime.user_file import reference_name

    assert reference_name("x = 1\n# tilelsp: reference=my_ref\n") == "my_ref"
    assert reference_name("def ref_program(): ...") == "ref_program"


def test_compare_tolerances_and_messages():
    from tilelang_core.runtime.numerics import compare

    e = torch.tensor([1.0, 100.0, 0.0])
    ok = compare(e + 1e-3, e, rtol=1e-2, atol=1e-2)
    assert ok.passed and abs(ok.max_abs_err - 1e-3) < 1e-6
    bad = compare(torch.tensor([1.0, 100.0, 0.5]), e, rtol=1e-2, atol=1e-2, name="output 'C'")
    assert not bad.passed and bad.mismatched == 1 and "output 'C'" in bad.message and "(2,)" in bad.message
    assert compare(torch.tensor([1.0, 100.0, 0.5]), e, rtol=1e-2, atol=1e-2, scale_atol=True).passed
    nan = compare(torch.tensor([float("nan")]), torch.tensor([1.0]))
    assert not nan.passed
    shape = compare(torch.zeros(2), torch.zeros(3))
    assert not shape.passed and "shape" in shape.message


def test_tolerances_and_torch_dtypes():
    from tilelang_core.runtime.numerics import tolerance, torch_dtype

    assert tolerance("bfloat16") == (1e-2, 1e-2) and tolerance("float32")[0] == 1e-5
    assert torch_dtype("float16") == torch.float16
    with pytest.raises(ValueError, match="no torch equivalent"):
        torch_dtype("int4")


def test_killed_verify_leaves_no_child_behind(tmp_path):
    """Cancelling `tilelsp verify` (the LSP kills it) must also end the child running the user's code."""
    import os
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "forever.py"
    path.write_text(textwrap.dedent(FOREVER))
    parent = subprocess.Popen([sys.executable, "-m", "tilelsp", "verify", str(path), "--device", "cpu",
                               "--timeout", "120"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def children_of(pid):
        out = subprocess.run(["pgrep", "-P", str(pid), "-f", "tilelang_core.verify.child"],
                             capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    deadline = time.monotonic() + 60
    while not children_of(parent.pid) and time.monotonic() < deadline and parent.poll() is None:
        time.sleep(0.2)
    found = children_of(parent.pid)
    assert found, "the verification child never started"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in found) and time.monotonic() < deadline:
        time.sleep(0.2)
    leftover = [pid for pid in found if os.path.exists(f"/proc/{pid}")
                and "verify.child" in open(f"/proc/{pid}/cmdline").read()]
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert not leftover, "the verification child outlived its parent"
