"""Code lenses on each kernel: Verify, Show IR, Show CUDA, Show Layout, Benchmark (client command ids)."""
from __future__ import annotations

from dataclasses import dataclass

from tilelang_core.source import Span

LENSES = (("Verify", "tilelsp.verify"), ("Show IR", "tilelsp.showIR"),
          ("Show CUDA", "tilelsp.showCuda"), ("Show Layout", "tilelsp.showLayout"), ("Benchmark", "tilelsp.benchmark"))


@dataclass(frozen=True)
class Lens:
    """One lens: where, its title, and the client command with its arguments."""

    span: Span
    title: str
    command: str
    arguments: tuple


def kernel_spans(result) -> list[tuple[str, Span]]:
    """(kernel name, span of its name) once per kernel, in source order (instances deduplicated)."""
    seen, out = set(), []
    for k in getattr(result, "kernels", None) or ():
        span = getattr(k, "name_span", None) or getattr(k, "span", None)
        if span is None or k.name in seen:
            continue
        seen.add(k.name)
        out.append((k.name, span))
    return sorted(out, key=lambda item: (item[1].line, item[1].col))


def code_lenses(result, uri: str) -> list[Lens]:
    """Five lenses per kernel, on its def line."""
    return [Lens(span, title, command, (uri, name))
            for name, span in kernel_spans(result) for title, command in LENSES]
