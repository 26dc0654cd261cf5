"""The command output shown in README.md and docs/ is what the commands print now (tilelsp/cli/docsamples.py)."""
from __future__ import annotations

from tilelsp.cli import docsamples


def test_doc_samples_match_real_output():
    stale = docsamples.stale()
    assert not stale, f"run `python -m tilelsp.cli.docsamples` to regenerate: {[str(p) for p in stale]}"


def test_a_drifted_sample_is_found_and_rewritten(tmp_path):
    (tmp_path / "examples").symlink_to(docsamples.ROOT / "examples")
    (tmp_path / "README.md").write_text("<!-- sample: tilelsp check examples/errors/threads_exceeded.py -->\n"
                                        "```\nold output\n```\n")
    assert docsamples.stale(tmp_path) == [tmp_path / "README.md"]
    fresh = docsamples.render((tmp_path / "README.md").read_text(), tmp_path)
    assert "error[threads-exceeded]" in fresh and "help: Set threads=1024" in fresh and "old output" not in fresh
