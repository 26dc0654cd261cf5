"""Hover text (Markdown) over a CheckResult: buffers, kernels and `T.*` builtins.

Kernel hovers add the lowered TIR and CUDA from the last on-save lowering when there is one (the
hover never lowers); buffer hovers add the inferred layout from that lowering.
"""
from __future__ import annotations

import json
import re
from urllib.parse import quote

from tilelang_core.source import Span

from .symbols import builtin_at

PREVIEW_LINES = 24
_WORD = re.compile(r"[A-Za-z_]\w*")


def fmt_bytes(n) -> str:
    """Human-readable byte count ("48 KiB", "1,536 B", "?")."""
    if n is None:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024:,} KiB"
    if n >= 1024:
        return f"{n / 1024:,.1f} KiB"
    return f"{n:,} B"


def shape_text(shape) -> str:
    """A shape tuple as `128×32`."""
    return "×".join(str(d) for d in shape) if shape else "scalar"


def hover(result, line: int, col: int, lowered=(), uri: str = "") -> tuple[str, Span] | None:
    """Markdown and the hovered span for the position (1-based line, code-point col), or None."""
    facts = getattr(result, "facts", None)
    kernel = _kernel_at(facts, result, line, col)
    if kernel is not None:
        return kernel_hover(kernel, facts, lowered, uri) + _other_instances(facts, kernel), _kernel_span(kernel, line, col)
    fact = facts.at(line, col) if facts is not None and hasattr(facts, "at") else None
    if fact is None or not hasattr(fact, "scope"):
        fact = _declared_here(facts, result.source.line_text(line), line, col)
    if fact is not None and hasattr(fact, "scope"):
        text = buffer_hover(fact, lowered) + _other_instances(facts, fact)
        return text, _use_span(fact, line, col)
    found = builtin_at(result.source.text, result.source.line_text(line), col)
    if found:
        builtin, start, end = found
        return builtin_hover(builtin), Span(line, start, line, end)
    return None


def _kernel_at(facts, result, line, col):
    for k in getattr(facts, "kernels", None) or ():
        name_span, launch = getattr(k, "name_span", None), getattr(k, "launch_span", None)
        def_line = k.span.line if getattr(k, "span", None) else None
        if (name_span and name_span.contains(line, col)) or (launch and launch.contains(line, col)):
            return k
        if def_line == line and result.source.line_text(line)[:col].strip() in ("def", ""):
            return k
    return None


def _declared_here(facts, line_text: str, line: int, col: int):
    """The buffer whose name is under the cursor on the line that declares it (`X = T.alloc_...`)."""
    m = next((m for m in _WORD.finditer(line_text) if m.start() <= col <= m.end()), None)
    if m is None:
        return None
    for b in getattr(facts, "buffers", None) or ():
        if b.name == m.group(0) and b.span is not None and b.span.line == line:
            return _Named(b, Span(line, m.start(), line, m.end()))
    return None


class _Named:
    """A fact seen through the name token under the cursor (its span is the token)."""

    def __init__(self, fact, span: Span):
        self._fact, self.span, self.uses = fact, span, ()

    def __getattr__(self, name):
        return getattr(self._fact, name)


def _kernel_span(kernel, line, col) -> Span:
    for s in (kernel.name_span, kernel.launch_span):
        if s and s.contains(line, col):
            return s
    return kernel.name_span or kernel.span


def _use_span(fact, line, col) -> Span:
    for s in [fact.span, *(getattr(fact, "uses", None) or ())]:
        if s and s.contains(line, col):
            return s
    return fact.span


def buffer_hover(b, lowered=()) -> str:
    """Markdown for a buffer: scope, shape, dtype, bytes, and the inferred layout when lowering ran."""
    lines = [f"```python\n{b.name}: {b.scope} {shape_text(b.shape)} {b.dtype}\n```",
             f"**{b.name}** — `{b.scope}` buffer, shape `{shape_text(b.shape)}`, dtype `{b.dtype}`, "
             f"{fmt_bytes(b.bytes)}" + (f" (kernel `{b.kernel}`)" if getattr(b, "kernel", None) else "")]
    if getattr(b, "instance", None):
        lines.append(f"instance: `{b.instance}`")
    layout = _layout_of(b, lowered)
    if layout:
        lines.append(f"inferred layout:\n```\n{layout}\n```")
    return "\n\n".join(lines)


def _other_instances(facts, fact) -> str:
    """One line per further instance of the same buffer/kernel (a factory called with several sizes)."""
    fact = fact._fact if isinstance(fact, _Named) else fact
    pool = facts.buffers if hasattr(fact, "scope") else facts.kernels
    others = [f for f in pool if f.name == fact.name and f.span == fact.span
              and getattr(f, "instance", "") != getattr(fact, "instance", "")]
    if not others:
        return ""
    if hasattr(fact, "scope"):
        rows = [f"- `{o.instance}`: {shape_text(o.shape)} {o.dtype}, {fmt_bytes(o.bytes)}" for o in others]
    else:
        rows = [f"- `{o.instance}`: grid ({', '.join(map(str, o.grid))}) × {o.threads} threads, "
                + ", ".join(f"{t} {fmt_bytes(b)}" for t, b in (o.smem_bytes or {}).items()) for o in others]
    return "\n\n**other instances**\n\n" + "\n".join(rows)


def _layout_of(b, lowered) -> str | None:
    for entry in lowered or ():
        if entry.get("kernel") == getattr(b, "kernel", None) and b.name in (entry.get("layouts") or {}):
            return entry["layouts"][b.name]
    return None


def kernel_hover(k, facts=None, lowered=(), uri: str = "") -> str:
    """Markdown for a kernel: launch, shared memory per stage and per target, registers, lowered code."""
    grid = ", ".join(str(g) for g in (k.grid or ())) or "?"
    title = f"kernel **{k.name}**" + (f" from `{k.factory}`" if getattr(k, "factory", None) else "")
    parts = [title + (f" — `{k.instance}`" if getattr(k, "instance", None) else ""),
             f"grid ({grid}) × {k.threads if k.threads is not None else '?'} threads"]
    parts.append(_smem_table(k))
    if getattr(k, "registers", None) is not None:
        parts.append(f"registers (estimate): {k.registers} per thread (limit 255)")
    parts.extend(_lowered_sections(k, lowered, uri))
    return "\n\n".join(p for p in parts if p)


def _smem_table(k) -> str:
    rows = [f"| `{name}` | {fmt_bytes(per)} | {stages} | {fmt_bytes(per * stages if per is not None else None)} |"
            for name, per, stages in (getattr(k, "smem_breakdown", None) or ())]
    head = "| shared buffer | per stage | stages | total |\n|---|---|---|---|\n" if rows else ""
    budget = []
    for target, used in (getattr(k, "smem_bytes", None) or {}).items():
        limit = (getattr(k, "smem_limit", None) or {}).get(target)
        mark = "" if used is None or limit is None or used <= limit else " ⚠ over budget"
        budget.append(f"- {target}: {fmt_bytes(used)} of {fmt_bytes(limit)}{mark}")
    return head + "\n".join(rows) + ("\n\n" if rows and budget else "") + "\n".join(budget)


def _command_link(title: str, command: str, args) -> str:
    return f"[{title}](command:{command}?{quote(json.dumps(args))})"


def _lowered_sections(k, lowered, uri) -> list[str]:
    entry = next((e for e in lowered or () if e.get("kernel") == k.name and not e.get("error")), None)
    if entry is None:
        return []
    out = []
    if entry.get("smem_bytes") is not None:
        out.append(f"after lowering ({entry.get('target')}): {fmt_bytes(entry['smem_bytes'])} shared memory allocated")
    launch = entry.get("launch") or {}
    for n, one in enumerate(launch.get("kernels") or [launch] if launch.get("grid") is not None else []):
        label = f"launch {n + 1} of {len(launch['kernels'])}" if launch.get("kernels") else "launch"
        out.append(f"{label}: grid {tuple(one['grid'])}, block {tuple(one.get('block') or ())}, "
                   f"dynamic shared memory {fmt_bytes(one.get('dynamic_smem'))}")
    if launch.get("workspaces"):
        out.append("workspaces (T.alloc_global, allocated per call): " + ", ".join(
            f"`{w['name']}` {w['dtype']}{list(w['shape'])}" for w in launch["workspaces"]))
    for key, lang, cmd in (("tir", "python", "tilelsp.showIR"), ("cuda", "cuda", "tilelsp.showCuda")):
        text = entry.get(key)
        if not text:
            continue
        lines = text.splitlines()
        more = len(lines) > PREVIEW_LINES
        body = "\n".join(lines[:PREVIEW_LINES]) + ("\n# …" if more and lang == "python" else "\n// …" if more else "")
        link = _command_link(f"full {key.upper()} ({len(lines)} lines)", cmd, [uri, k.name])
        out.append(f"<details><summary>{key.upper()}</summary>\n\n```{lang}\n{body}\n```\n\n{link}\n</details>")
    return out


def builtin_hover(b) -> str:
    """Markdown for a registry builtin: signature, then its doc."""
    return f"```python\n{b.signature}\n```\n\n{b.doc.strip()}" if b.doc else f"```python\n{b.signature}\n```"
