"""Renderers for `tilelsp check` results: text (with caret snippets), json, sarif 2.1.0 and GitHub annotations.

Every renderer takes the same list of `FileResult`s (one per checked file, in path order) and returns a string.
Columns in every output are 1-based; json/sarif end columns are exclusive, GitHub's are inclusive.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.snippet import caret_snippet

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/tilelsp/tilelsp"


@dataclass
class FileResult:
    """What checking one file produced: its display path, text (for snippets) and diagnostics."""

    path: str
    text: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    trace: str | None = None  # traceback of an internal error, shown with --debug
    kernels: int | None = None  # kernel instances found (None: not known)

    @property
    def failed(self) -> bool:
        """True when the file could not be read or the checker crashed on it."""
        return any(d.code in ("internal-error", "file-unreadable") for d in self.diagnostics)


def counts(results) -> dict[str, int]:
    """Number of diagnostics per severity name over all results."""
    out = {s.value: 0 for s in Severity}
    for r in results:
        for d in r.diagnostics:
            out[d.severity.value] += 1
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary(results) -> str:
    """One line such as "2 errors, 1 warning in 3 files", or "no TileLang kernel found in 3 files" when every file
    was read and none holds a kernel."""
    c = counts(results)
    if results and not any(c.values()) and all(r.kernels == 0 for r in results):
        return f"no TileLang kernel found in {_plural(len(results), 'file')}"
    parts = [_plural(c["error"], "error"), _plural(c["warning"], "warning")]
    if c["info"]:
        parts.append(_plural(c["info"], "info"))
    return f"{', '.join(parts)} in {_plural(len(results), 'file')}"


# --- text ---------------------------------------------------------------------------------

_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;36m", "note": "\x1b[36m",
           "help": "\x1b[32m", "bold": "\x1b[1m", "gutter": "\x1b[34m", "reset": "\x1b[0m"}


class _Paint:
    """Wraps text in ANSI colours, or not at all."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, key: str, text: str) -> str:
        return f"{_COLORS[key]}{text}{_COLORS['reset']}" if self.enabled else text


def render_text(results, color: bool = False, show_summary: bool = True) -> str:
    """Compiler-style text: `path:line:col: error[code] message`, a caret snippet, notes, a summary."""
    paint = _Paint(color)
    blocks = [_text_diag(r, d, paint, _several_instances(r)) for r in results for d in r.diagnostics]
    if show_summary:
        blocks.append(paint("bold", summary(results)))
    return "\n".join(blocks) + "\n" if blocks else ""


def _several_instances(result: FileResult) -> bool:
    """True when a file's diagnostics come from more than one kernel instance (then each names its own)."""
    return len({d.instance for d in result.diagnostics if d.instance}) > 1


def _text_diag(result: FileResult, d: Diagnostic, paint: _Paint, name_instance: bool = False) -> str:
    sev = d.severity.value
    where = paint("bold", f"{result.path}:{d.span.line}:{d.span.col + 1}:")
    lines = [f"{where} {paint(sev, f'{sev}[{d.code}]')} {d.message}"]
    if not result.failed:
        lines += caret_snippet(result.text, d.span, paint, sev)
    for rel in d.related:
        lines.append(f"  {paint('note', 'note:')} {result.path}:{rel.span.line}:{rel.span.col + 1}: {rel.message}")
    if name_instance and d.instance:
        lines.append(f"  {paint('note', 'note:')} in instance {d.instance}")
    if d.fix is not None:
        lines.append(f"  {paint('help', 'help:')} {d.fix.title}")
    return "\n".join(lines)


# --- json ---------------------------------------------------------------------------------


def diagnostic_dict(path: str, d: Diagnostic) -> dict:
    """One diagnostic as a JSON object (1-based lines and columns, end exclusive)."""
    s = d.span
    return {
        "path": path,
        "line": s.line,
        "column": s.col + 1,
        "end_line": s.end_line,
        "end_column": s.end_col + 1,
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
        "kernel": d.kernel,
        "instance": d.instance,
        "target": d.target,
        "related": [{"path": path, "line": r.span.line, "column": r.span.col + 1, "end_line": r.span.end_line,
                     "end_column": r.span.end_col + 1, "message": r.message} for r in d.related],
        "fix": _fix_dict(d.fix),
    }


def _fix_dict(fix) -> dict | None:
    if fix is None:
        return None
    edits = [{"line": e.span.line, "column": e.span.col + 1, "end_line": e.span.end_line,
              "end_column": e.span.end_col + 1, "new_text": e.new_text} for e in fix.edits]
    return {"title": fix.title, "edits": edits}


def render_json(results) -> str:
    """A JSON list with one object per diagnostic, in path then source order."""
    return json.dumps([diagnostic_dict(r.path, d) for r in results for d in r.diagnostics], indent=2) + "\n"


# --- sarif --------------------------------------------------------------------------------

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_sarif(results, version: str = "0.0.0") -> str:
    """A SARIF 2.1.0 log (one run, tool "tilelsp", every code as a rule) for GitHub code scanning."""
    from tilelang_core.codes import CODES

    rules = [_sarif_rule(info) for info in CODES.values()]
    index = {info.code: i for i, info in enumerate(CODES.values())}
    run = {
        "tool": {"driver": {"name": "tilelsp", "version": version, "informationUri": INFORMATION_URI,
                            "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": _cwd_uri()}},
        "columnKind": "unicodeCodePoints",
        "results": [_sarif_result(r.path, d, index) for r in results for d in r.diagnostics],
        "invocations": [{"executionSuccessful": not any(r.failed for r in results)}],
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def _sarif_rule(info) -> dict:
    help_text = f"{info.meaning}\n\nFix: {info.fix}"
    if info.example:
        help_text += f"\n\nExample:\n{info.example}"
    return {
        "id": info.code,
        "name": "".join(p.capitalize() for p in info.code.split("-")),
        "shortDescription": {"text": info.meaning},
        "fullDescription": {"text": f"{info.meaning} {info.fix}"},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity.value]},
        "properties": {"tags": ["tilelang", info.area]},
    }


def _sarif_result(path: str, d: Diagnostic, index: dict) -> dict:
    result = {
        "ruleId": d.code,
        "level": _SARIF_LEVEL[d.severity.value],
        "message": {"text": d.message},
        "locations": [_sarif_location(path, d.span)],
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.related:
        result["relatedLocations"] = [
            dict(_sarif_location(path, r.span), id=i, message={"text": r.message}) for i, r in enumerate(d.related)
        ]
    props = {k: v for k, v in (("kernel", d.kernel), ("instance", d.instance), ("target", d.target)) if v}
    if props:
        result["properties"] = props
    return result


def _sarif_location(path: str, span) -> dict:
    region = {"startLine": span.line, "startColumn": span.col + 1, "endLine": span.end_line,
              "endColumn": span.end_col + 1}
    return {"physicalLocation": {"artifactLocation": _artifact(path), "region": region}}


def _artifact(path: str) -> dict:
    from pathlib import PurePosixPath, Path
    from urllib.parse import quote

    if Path(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(PurePosixPath(path).as_posix()), "uriBaseId": "%SRCROOT%"}


def _cwd_uri() -> str:
    from pathlib import Path

    return Path.cwd().as_uri().rstrip("/") + "/"


# --- github -------------------------------------------------------------------------------

_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow-command message (`%`, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value (as data, plus `:` and `,`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(results) -> str:
    """GitHub Actions workflow annotations, one `::error file=...::message` line per diagnostic."""
    return "".join(_github_line(r.path, d) + "\n" for r in results for d in r.diagnostics)


def _github_line(path: str, d: Diagnostic) -> str:
    s = d.span
    props = [("file", path), ("line", str(s.line)), ("col", str(s.col + 1))]
    props += [("endLine", str(s.end_line))]
    if s.end_line == s.line:
        props.append(("endColumn", str(max(s.end_col, s.col + 1))))  # inclusive, 1-based
    props.append(("title", f"tilelsp({d.code})"))
    message = d.message + "".join(f"\nnote: {path}:{r.span.line}:{r.span.col + 1}: {r.message}" for r in d.related)
    prop_text = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{_GITHUB_COMMAND[d.severity.value]} {prop_text}::{escape_data(message)}"


def render(fmt: str, results, *, color: bool = False, version: str = "0.0.0") -> str:
    """Render results in one of FORMATS."""
    if fmt == "json":
        return render_json(results)
    if fmt == "sarif":
        return render_sarif(results, version)
    if fmt == "github":
        return render_github(results)
    return render_text(results, color=color)
