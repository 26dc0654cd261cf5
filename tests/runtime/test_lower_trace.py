"""The lowering tracer (TL_LOWER_TRACE or TileLang's TILELANG_PASS_DIFF, `tilelang.tools.lower_trace`): its modes
from the environment, and a real `tilelang.lower` traced stage by stage in the terminal and in an HTML report."""
from __future__ import annotations

import pytest

KERNEL = '''
import tilelang.language as T


@T.prim_func
def add_one(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as _:
        for i in T.Parallel(64):
            B[i] = A[i] + 1.0
'''


@pytest.fixture(autouse=True)
def _tracing_off(monkeypatch):
    from tilelang_core import lower_trace

    for name in ("TL_LOWER_TRACE", "TL_LOWER_TRACE_DIR", "TILELANG_PASS_DIFF", "TILELANG_PASS_DIFF_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    lower_trace.disable()
    yield
    lower_trace.disable()


def test_the_mode_comes_from_tl_lower_trace(monkeypatch):
    from tilelang_core.lower_trace import mode_from_env

    assert mode_from_env() is None
    for raw, want in (("0", None), ("Off", None), ("yes", "html"), ("1", "html"), ("terminal", "terminal"),
                      ("both", "both")):
        monkeypatch.setenv("TL_LOWER_TRACE", raw)
        assert mode_from_env() == want
    monkeypatch.setenv("TL_LOWER_TRACE", "loud")
    with pytest.raises(ValueError, match="TL_LOWER_TRACE='loud'"):
        mode_from_env()


@pytest.mark.tvm
def test_a_lowering_is_traced_stage_by_stage(run_aliased, tmp_path, capsys, monkeypatch):
    from tilelang_core import lower_trace
    from tilelang_core.compat.engine import lower

    add_one = run_aliased("traced", KERNEL)["add_one"]
    lower(add_one, target="cpu")
    assert lower_trace.last_session() is None  # off: nothing recorded

    session = lower_trace.enable("terminal", str(tmp_path))
    lower(add_one, target="cpu")
    assert [r.stage for r in session.records] == ["parsed", "legalized", "tir", "llvm"]
    assert session.records[0].changed and all(r.kernel == "add_one" for r in session.records)
    out = capsys.readouterr().out
    assert "add_one (cpu) Pass 1: parsed: +" in out and "Pass 4: llvm" in out
    assert not (tmp_path / "report.html").exists() and lower_trace.last_session() is session

    monkeypatch.setenv("TL_LOWER_TRACE", "html")
    monkeypatch.setenv("TL_LOWER_TRACE_DIR", str(tmp_path / "env"))
    lower_trace.disable()  # the environment's tracing goes on
    lower(add_one, target="cpu")
    report = (tmp_path / "env" / "report.html").read_text()
    assert "Pass 4: add_one (cpu) llvm" in report and "<table" in report


def test_tilelangs_pass_diff_switch_is_a_second_spelling(monkeypatch, tmp_path):
    from tilelang_core.compat.env import env
    from tilelang_core.lower_trace import active_session, mode_from_env

    for raw, want in (("", None), ("off", None), ("1", "terminal"), ("terminal", "terminal"), ("html", "html"),
                      ("both", "both"), ("loud", "terminal")):
        monkeypatch.setenv("TILELANG_PASS_DIFF", raw)
        assert mode_from_env() == want and env.get_pass_diff_mode() == want
    monkeypatch.setenv("TL_LOWER_TRACE", "0")  # TL_LOWER_TRACE, when set, decides
    assert mode_from_env() is None
    assert str(env.TILELANG_PASS_DIFF_OUTPUT) == "tmp/pass_diff_output"
    monkeypatch.setenv("TILELANG_PASS_DIFF_OUTPUT", str(tmp_path / "diffs"))
    monkeypatch.setenv("TL_LOWER_TRACE", "")
    monkeypatch.setenv("TILELANG_PASS_DIFF", "both")
    assert env.TILELANG_PASS_DIFF_OUTPUT == str(tmp_path / "diffs") == active_session().trace_dir


@pytest.mark.tvm
def test_pass_diff_html_report_goes_to_its_output_folder(run_aliased, tmp_path, monkeypatch):
    from tilelang_core.compat.engine import lower

    add_one = run_aliased("diffed", KERNEL)["add_one"]
    monkeypatch.setenv("TILELANG_PASS_DIFF", "html")
    monkeypatch.setenv("TILELANG_PASS_DIFF_OUTPUT", str(tmp_path / "out"))
    lower(add_one, target="cpu")
    assert "Pass 4: add_one (cpu) llvm" in (tmp_path / "out" / "report.html").read_text()
