"""Inlay hints after allocations: scope, shape, dtype, and shared bytes per buffer (stages included)."""
from __future__ import annotations

from dataclasses import dataclass

from .hover import fmt_bytes, shape_text


@dataclass(frozen=True)
class Hint:
    """One inlay hint at (1-based line, code-point col)."""

    line: int
    col: int
    label: str
    tooltip: str = ""


def inlay_hints(result, first_line: int = 1, last_line: int | None = None) -> list[Hint]:
    """Hints for the allocated (non-global) buffers declared in [first_line, last_line]."""
    facts = getattr(result, "facts", None)
    last_line = last_line or len(result.source.lines)
    stages = _stages_by_buffer(facts)
    hints, seen = [], set()
    for b in getattr(facts, "buffers", None) or ():
        span = getattr(b, "span", None)
        if span is None or b.scope == "global" or not first_line <= span.end_line <= last_line:
            continue
        key = (span.end_line, b.name)
        if key in seen:  # several instances of one factory declare the same buffer
            continue
        seen.add(key)
        end_col = len(result.source.line_text(span.end_line))
        label = f"{b.scope} {shape_text(b.shape)} {b.dtype}"
        if b.scope.startswith("shared"):
            n = stages.get((b.kernel, b.name), 1)
            label += f" · {fmt_bytes(b.bytes)}" + (f" ×{n} stages" if n > 1 else "")
        hints.append(Hint(span.end_line, end_col, "  # " + label, f"{b.name}: {label}"))
    return hints


def _stages_by_buffer(facts) -> dict:
    out = {}
    for k in getattr(facts, "kernels", None) or ():
        for name, _per, stages in getattr(k, "smem_breakdown", None) or ():
            out[(k.name, name)] = max(out.get((k.name, name), 1), stages or 1)
    return out
