"""Lower tracing (TileLang's `tilelang.tools.lower_trace`, TL_LOWER_TRACE): each run of the lowering pipeline
(`lowering.lower`: `tilelang.lower`, `tilelsp ir`, `JITKernel.get_ir`) recorded stage by stage, with each stage's
text and the lines it added and removed against the stage before, shown in the terminal, in an HTML report, or both.

TL_LOWER_TRACE: unset, empty, 0/off/false/no: off; 1/on/true/yes: html; terminal, html or both: that mode.
TL_LOWER_TRACE_DIR: where HTML reports go (default ./lower_trace). `enable(mode, trace_dir)` and `disable()` switch
tracing in code, over the environment; `last_session()` is the session that recorded the latest run.
TileLang's pass-diff switch is a second spelling, read when TL_LOWER_TRACE is unset or empty: TILELANG_PASS_DIFF
(0/false/no/off or empty: off; html, both: that mode; terminal or anything else: terminal) and
TILELANG_PASS_DIFF_OUTPUT for the folder (when TL_LOWER_TRACE_DIR is unset).
"""
from __future__ import annotations

import difflib
import html
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

OFF_VALUES = ("", "0", "off", "false", "no")
ON_VALUES = ("1", "on", "true", "yes")
MODES = ("terminal", "html", "both")


def mode_from_env() -> str | None:
    """The trace mode TL_LOWER_TRACE asks for: None (off), "terminal", "html" or "both"; a ValueError naming the
    values there are for anything else."""
    raw = os.environ.get("TL_LOWER_TRACE", "").strip().lower()
    if not raw:
        return pass_diff_mode(os.environ.get("TILELANG_PASS_DIFF"))
    if raw in OFF_VALUES:
        return None
    if raw in ON_VALUES:
        return "html"
    if raw in MODES:
        return raw
    raise ValueError(f"TL_LOWER_TRACE={raw!r}: use one of {', '.join(MODES)}, 1/on/true/yes (html) or "
                     "0/off/false/no")


def pass_diff_mode(value: str | None) -> str | None:
    """The trace mode TileLang's TILELANG_PASS_DIFF value asks for: None for an off value, "html" or "both" when
    it names them, else "terminal"."""
    raw = (value or "").strip().lower()
    if raw in OFF_VALUES:
        return None
    return raw if raw in MODES else "terminal"


@dataclass
class StageRecord:
    """One stage of one lowering: its text and the lines it added and removed against the stage before."""

    index: int
    kernel: str
    target: str
    stage: str
    text: str
    added: int
    removed: int

    @property
    def changed(self) -> bool:
        """Whether the stage changed the text of the one before."""
        return bool(self.added or self.removed)


@dataclass
class TraceSession:
    """The records of the lowerings traced while one mode and folder were in force."""

    mode: str
    trace_dir: str
    records: list = field(default_factory=list)
    runs: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, kernel: str, target: str, stages: dict) -> list[StageRecord]:
        """Add one lowering's stages (name -> text, in pipeline order); shows them as the mode says."""
        with self._lock:
            self.runs += 1
            before, added = "", []
            for stage, text in stages.items():
                plus, minus = line_changes(before, text)
                added.append(StageRecord(len(self.records), kernel, target, stage, text, plus, minus))
                self.records.append(added[-1])
                before = text
        if self.mode in ("terminal", "both"):
            for rec in added:
                print(f"[lower trace] {kernel} ({target}) Pass {rec.index + 1}: {rec.stage}: "
                      + (f"+{rec.added} -{rec.removed} lines" if rec.changed else "unchanged"), file=sys.stdout)
        if self.mode in ("html", "both"):
            self.write_html(Path(self.trace_dir) / "report.html")
        return added

    def write_html(self, path: Path) -> Path:
        """The report of every record so far: one section per stage with its diff against the stage before."""
        path.parent.mkdir(parents=True, exist_ok=True)
        differ = difflib.HtmlDiff(wrapcolumn=100)
        parts = ["<!doctype html><meta charset='utf-8'><title>tilelang_core lower trace</title>",
                 "<h1>tilelang_core lower trace</h1>"]
        previous: dict[str, str] = {}
        for rec in self.records:
            before = previous.get(rec.kernel, "") if rec.stage != "parsed" else ""
            parts.append(f"<h2>Pass {rec.index + 1}: {html.escape(rec.kernel)} ({html.escape(rec.target)}) "
                         f"{html.escape(rec.stage)}: +{rec.added} -{rec.removed}</h2>")
            parts.append(differ.make_table(before.splitlines(), rec.text.splitlines(), "before", rec.stage,
                                           context=True, numlines=3) if rec.changed else "<p>unchanged</p>")
            previous[rec.kernel] = rec.text
        path.write_text("\n".join(parts), encoding="utf-8")
        return path


def line_changes(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed) from `before` to `after`."""
    plus = minus = 0
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


_state = {"explicit": None, "from_env": None, "last": None}


def enable(mode: str | None = None, trace_dir: str | None = None) -> TraceSession:
    """Trace every lowering from now on (`mode`: default TL_LOWER_TRACE's, else html; `trace_dir`: default
    TL_LOWER_TRACE_DIR, else ./lower_trace)."""
    mode = mode or mode_from_env() or "html"
    if mode not in MODES:
        raise ValueError(f"lower trace mode {mode!r}: use one of {', '.join(MODES)}")
    _state["explicit"] = TraceSession(mode, trace_dir or _env_dir())
    return _state["explicit"]


def disable() -> None:
    """Stop the tracing `enable` started (while TL_LOWER_TRACE is set, lowerings are still traced)."""
    _state["explicit"] = None
    _state["from_env"] = None


def active_session() -> TraceSession | None:
    """The session recording lowerings now: `enable`'s, else one for TL_LOWER_TRACE while it is set."""
    if _state["explicit"] is not None:
        return _state["explicit"]
    mode = mode_from_env()
    if mode is None:
        return None
    current = _state["from_env"]
    if current is None or (current.mode, current.trace_dir) != (mode, _env_dir()):
        _state["from_env"] = TraceSession(mode, _env_dir())
    return _state["from_env"]


def last_session() -> TraceSession | None:
    """The session that recorded the latest traced lowering."""
    return _state["last"]


def trace_lowering(kernel: str, target: str, stages: dict) -> None:
    """Record one lowering's stages when tracing is on (called by `lowering.lower`)."""
    session = active_session()
    if session is not None:
        session.record(kernel, target, stages)
        _state["last"] = session


def _env_dir() -> str:
    return (os.environ.get("TL_LOWER_TRACE_DIR") or os.environ.get("TILELANG_PASS_DIFF_OUTPUT")
            or os.path.join(os.getcwd(), "lower_trace"))
