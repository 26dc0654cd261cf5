"""Outcome of one test of the peer suite, from the records `peer_plugin` wrote, and the per-function verdict.

Outcomes, from best to worst: pass; refused (a diagnostic of ours stopped it: a code that is not internal);
missing (a public name, keyword or module of `tilelang` we do not have); hang (ran past its time); crash (an
exception raised inside tilelang_core, or an internal diagnostic); wrong (the test's own check failed: a wrong
result, or `pytest.raises` saw no error where TileLang raises one). A function's verdict is its worst case.
"""
from __future__ import annotations

import re

ORDER = ("pass", "refused", "missing", "hang", "crash", "wrong")
INTERNAL_CODES = {"codegen-error", "internal-error"}
_OURS = re.compile(r"/tilelang_core/")
_MISSING = re.compile(r"(module|object) '?tilelang[\w.]*'? has no attribute|cannot import name .* from '?tilelang|"
                      r"No module named '?tilelang|unexpected keyword argument|has no attribute '(\w+)'")


def _innermost_ours(frames: list[dict]) -> bool:
    return bool(frames) and bool(_OURS.search(frames[-1]["file"]))


def classify_exception(exc: dict) -> str:
    """One failed test's outcome from its recorded exception."""
    kind, message, frames = exc["type"], exc.get("message", ""), exc.get("frames", [])
    if kind == "PeerTestTimeout":
        return "hang"
    if kind == "Failed" and "DID NOT RAISE" in message:
        return "wrong"
    if kind == "CompileError":
        return "crash" if INTERNAL_CODES & set(exc.get("codes") or []) else "refused"
    if kind in ("UnsupportedFeatureError", "KernelError", "BindError", "UnknownTargetError"):
        return "refused"  # our stated refusals: an API, a builtin use, or a target (sm_75) we do not have
    touches_ours = any(_OURS.search(f["file"]) for f in frames)
    if kind in ("AttributeError", "ImportError", "ModuleNotFoundError") and "tilelang" in message:
        return "missing"
    if kind == "TypeError" and _MISSING.search(message) and touches_ours:
        return "missing"
    if kind == "AssertionError" and not _innermost_ours(frames):
        return "wrong"
    return "crash"


def classify_collect_error(tail: str) -> str:
    """A test file that failed to import: a name of ours it needs is missing, or something crashed."""
    if re.search(r"(AttributeError|ImportError|ModuleNotFoundError).*tilelang", tail):
        return "missing"
    return "crash"


def classify_record(record: dict) -> str:
    """A test's outcome ('skipped' for skips) from its end record."""
    if record["outcome"] == "skipped" and "xfail" not in record:
        return "skipped"
    if record["outcome"] == "passed" or "xfail" in record:
        return "pass"
    return classify_exception(record.get("exception") or {"type": "Unknown"})


def worst(outcomes: list[str]) -> str:
    """The function's verdict: its worst case (skipped cases ignored unless all are skipped)."""
    ran = [o for o in outcomes if o != "skipped"]
    if not ran:
        return "skipped"
    return max(ran, key=ORDER.index)
