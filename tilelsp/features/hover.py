"""Hover text (Markdown) over a CheckResult: buffers, kernels (on the kernel's or its factory's `def`), `T.*`
builtins, and the statement under the cursor.

With a stored lowering (on save, or in the background after an edit settles; the hover never lowers;
hover_lowered.py) a kernel hover adds its TIR and
CUDA, a buffer hover its inferred layout and picture, a statement its CUDA lines, and `T.gemm` what it became.
"""
from __future__ import annotations

import re

from tilelang_core.source import Span

from .hover_lowered import (fmt_bytes, gemm_section, kernel_sections, layout_image, statement_cuda)
from .symbols import builtin_at

_WORD = re.compile(r"[A-Za-z_]\w*")
_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)")

__all__ = ["fmt_bytes", "hover", "shape_text"]


def shape_text(shape) -> str:
    """A shape tuple as `128×32`."""
    return "×".join(str(d) for d in shape) if shape else "scalar"


def hover(result, line: int, col: int, lowered=(), uri: str = "", images: bool = False) -> tuple[str, Span] | None:
    """Markdown and the hovered span for the position (1-based line, code-point col), or None. `images`: the
    client shows Markdown images (a buffer's layout picture is a data: URI)."""
    facts = getattr(result, "facts", None)
    line_text = result.source.line_text(line)
    factory = _factory_at(facts, line_text, line, col, lowered, uri)
    if factory is not None:
        return factory
    kernel = _kernel_at(facts, result, line, col)
    if kernel is not None:
        return kernel_hover(kernel, facts, lowered, uri) + _other_instances(facts, kernel), _kernel_span(kernel, line, col)
    here = statement_cuda(lowered, None, line, uri)
    fact = facts.at(line, col) if facts is not None and hasattr(facts, "at") else None
    if fact is None or not hasattr(fact, "scope"):
        fact = _declared_here(facts, line_text, line, col)
    if fact is not None and hasattr(fact, "scope"):
        text = buffer_hover(fact, lowered) + _other_instances(facts, fact)
        picture = layout_image(lowered, getattr(fact, "kernel", None), fact.name, uri) if images else ""
        return _join(text, picture, here), _use_span(fact, line, col)
    found = builtin_at(result.source.text, line_text, col)
    if found:
        builtin, start, end = found
        gemm = gemm_section(lowered, line) if builtin.name == "T.gemm" else ""
        return _join(builtin_hover(builtin), gemm, here), Span(line, start, line, end)
    word = next((m for m in _WORD.finditer(line_text) if m.start() <= col < m.end()), None)
    if here and word is not None and "#" not in line_text[:col]:
        return here, Span(line, word.start(), line, word.end())
    return None


def _join(*sections: str) -> str:
    return "\n\n---\n\n".join(s for s in sections if s)


def _factory_at(facts, line_text: str, line: int, col: int, lowered, uri: str):
    """Hover on a kernel factory's `def` line: its kernels' instances (the first one in full)."""
    m = _DEF.match(line_text)
    if m is None or col > m.end(1):
        return None
    kernels = [k for k in getattr(facts, "kernels", None) or () if getattr(k, "factory", None) == m.group(1)]
    if not kernels:
        return None
    names = ", ".join(dict.fromkeys(f"`{k.name}`" for k in kernels))
    text = f"kernel factory **{m.group(1)}** → {names}\n\n" + kernel_hover(kernels[0], facts, lowered, uri)
    return text + _other_instances(facts, kernels[0]), Span(line, m.start(1), line, m.end(1))


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
    swizzle = next((e["swizzles"][b.name] for e in lowered or () if e.get("kernel") == getattr(b, "kernel", None)
                    and b.name in (e.get("swizzles") or {})), None)
    if swizzle:
        lines.append(f"swizzle: {swizzle}")
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
    parts.extend(kernel_sections(k, lowered, uri))
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


def builtin_hover(b) -> str:
    """Markdown for a registry builtin: signature, then its doc."""
    return f"```python\n{b.signature}\n```\n\n{b.doc.strip()}" if b.doc else f"```python\n{b.signature}\n```"
