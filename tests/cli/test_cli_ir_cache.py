"""`tilelsp ir` keeps stage texts between runs by content and shows stage progress on stderr (stdout stays clean)."""
from __future__ import annotations

import json

from tests.conftest import ROOT
from tilelsp import cli

GEMM = ROOT / "examples" / "gemm.py"


def _ir(capsys, path, *flags) -> tuple[int, str, str]:
    code = cli.main(["ir", str(path), "--stage", "layouts", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_second_run_reads_the_cache_and_an_edit_misses_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TILELSP_CACHE_DIR", str(tmp_path / "cache"))
    code, cold, err = _ir(capsys, GEMM, "--progress")
    assert code == 0 and "# C_local:" in cold and "tilelsp" not in cold  # stdout: the stage text only
    assert "legalized done (2/4" in err and "layouts ready in" in err and "from the cache" not in err
    entries = list((tmp_path / "cache" / "ir").rglob("*.json"))
    assert len(entries) == 1
    code, warm, err = _ir(capsys, GEMM, "--progress")
    assert code == 0 and warm == cold and err.strip() == "tilelsp ir: gemm (sm_90a): layouts from the cache"
    # a tampered entry fails its digest: lowered again, the same text
    entry = json.loads(entries[0].read_text())
    entries[0].write_text(json.dumps({**entry, "text": "stale"}))
    code, again, err = _ir(capsys, GEMM, "--progress")
    assert code == 0 and again == cold and "from the cache" not in err
    # another pipeline depth is another kernel: a miss, with its own entry
    edited = tmp_path / "gemm.py"
    edited.write_text(GEMM.read_text().replace("num_stages=num_stages)", "num_stages=2)"))
    code, other, err = _ir(capsys, edited, "--progress")
    assert code == 0 and other != cold and "from the cache" not in err
    assert len(list((tmp_path / "cache" / "ir").rglob("*.json"))) == 2


def test_progress_is_off_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TILELSP_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = _ir(capsys, GEMM)
    assert code == 0 and out and err == ""
    code, out, err = _ir(capsys, GEMM, "--no-progress")
    assert code == 0 and out and err == ""


def test_on_a_terminal_progress_rewrites_one_line():
    import io

    from tilelsp.cli.stage_progress import StageProgress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    shown = StageProgress("tilelsp ir: lowering k for sm_90a", ("parsed", "legalized", "cuda"), True, term)
    shown.done("parsed")
    shown.done("legalized")
    shown.finish("cuda ready")
    text = term.getvalue()
    assert text.count("\r\033[K") == 4 and text.count("\n") == 1 and text.endswith("\n")
    assert "parsed done (1/3" in text and "now legalized…" in text and "cuda ready in" in text
    quiet = Terminal()
    StageProgress("x", ("parsed",), False, quiet).finish("done")
    assert quiet.getvalue() == ""
