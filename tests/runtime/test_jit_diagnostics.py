"""JIT phase logs (`tilelang.jit.diagnostics`, TILELANG_JIT_DIAGNOSTICS) around a real CPU compile, and the nvcc
bound of TILELANG_COMPILE_TIMEOUT_SECONDS (its parser, and a run past it reported as an NvccError)."""
from __future__ import annotations

import logging
import subprocess

import pytest

KERNEL = '''
import tilelang
import tilelang.language as T


@T.prim_func
def add_one(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as _:
        for i in T.Parallel(64):
            B[i] = A[i] + 1.0
'''


@pytest.mark.tvm
def test_a_compile_logs_its_phases_when_asked(run_aliased, monkeypatch, caplog):
    from tilelang_core.runtime.jit import compile

    add_one = run_aliased("jit_phases", KERNEL)["add_one"]
    caplog.set_level(logging.INFO, logger="tilelang.jit.diagnostics")
    compile(add_one, target="cpu")
    assert not caplog.records  # off unless asked
    monkeypatch.setenv("TILELANG_JIT_DIAGNOSTICS", "1")
    compile(add_one, target="cpu")
    messages = [r.getMessage() for r in caplog.records]
    assert [m.split(" in ")[0].split(" (")[0] for m in messages] == [
        "TileLang JIT phase start: parse", "TileLang JIT phase done: parse",
        "TileLang JIT phase start: build", "TileLang JIT phase done: build"]
    assert "kernel='add_one'" in messages[2] and "target='cpu'" in messages[2]


def test_a_failing_phase_is_logged_and_its_error_raised(caplog):
    from tilelang_core.runtime.jit_diagnostics import jit_phase

    caplog.set_level(logging.INFO, logger="tilelang.jit.diagnostics")
    with pytest.raises(KeyError), jit_phase("lower", enabled=True, kernel="k"):
        raise KeyError("x")
    assert "TileLang JIT phase failed: lower" in caplog.records[-1].getMessage()


def test_the_compile_timeout_setting(monkeypatch):
    from tilelang_core.runtime.artifact import compile_timeout_seconds

    for raw, want in (("", None), ("0", None), (" 2.5 ", 2.5)):
        monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", raw)
        assert compile_timeout_seconds() == want
    for raw in ("soon", "nan", "inf", "-1"):
        monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", raw)
        with pytest.raises(ValueError, match="TILELANG_COMPILE_TIMEOUT_SECONDS"):
            compile_timeout_seconds()


def test_an_nvcc_run_past_the_bound_is_an_nvcc_error(monkeypatch):
    from tilelang_core.runtime import artifact

    seen = {}

    def hanging(cmd, **kwargs):
        seen["timeout"] = kwargs.get("timeout")
        raise subprocess.TimeoutExpired(cmd, kwargs.get("timeout"))

    monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "0.5")
    monkeypatch.setattr(artifact.shutil, "which", lambda exe: "/usr/bin/nvcc")
    monkeypatch.setattr(artifact.subprocess, "run", hanging)
    with pytest.raises(artifact.NvccError, match="timed out after 0.5 seconds"):
        artifact.compile_cubin("__global__ void k() {}", "sm_90a")
    assert seen["timeout"] == 0.5
