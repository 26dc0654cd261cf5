"""`check_source`: the pure-Python check of one file (discover, consteval, parse, analyse). Never imports tvm."""
from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import Diagnostic, DiagnosticSink, sorted_diagnostics
from .source import SourceFile
from .suppress import filter_diagnostics
from .target import DEFAULT_ARCH, parse_targets

DEFAULT_TARGETS = (DEFAULT_ARCH,)


@dataclass
class CheckResult:
    """Everything the checks learned about one file: kernel instances, diagnostics and facts."""

    source: SourceFile
    kernels: list = field(default_factory=list)  # list[ir.nodes.PrimFunc], one per instance
    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: object = None  # analysis.facts.Facts
    targets: tuple[str, ...] = DEFAULT_TARGETS

    @property
    def errors(self) -> list[Diagnostic]:
        """Only the error-severity diagnostics."""
        return [d for d in self.diagnostics if d.is_error]


def check_source(
    text: str, path: str = "<string>", targets=DEFAULT_TARGETS, instances: dict | None = None, select=None, ignore=None
) -> CheckResult:
    """Check one file's text: every kernel instance, every diagnostic, and facts for hover/inlay.

    `instances` optionally maps a factory name to a list of keyword-argument dicts to check
    (overrides what the file's call sites and `# tilelsp:` comments give). `select`/`ignore` are
    collections of codes to keep/drop; `# tilelsp: ignore[...]` comments are always honoured.
    """
    from .analysis import analyze
    from .analysis.index_consistency import inconsistent_index_warnings
    from .analysis.tile_provenance import prim_funcs, tile_index_warnings
    from .frontend import parse_file
    from .passes.hazards import schedule_hazards

    targets = parse_targets(targets)  # UnknownTargetError names the supported ones
    source = SourceFile(text, path)
    sink = DiagnosticSink()
    kernels = parse_file(source, sink, instances=instances)
    facts = analyze(kernels, tuple(targets), sink)
    schedule_hazards(kernels, sink)
    fns = prim_funcs(text)  # parsed once for the two source-level index checks
    sink.extend(tile_index_warnings(text, fns))
    sink.extend(inconsistent_index_warnings(text, fns))
    diagnostics = filter_diagnostics(source, sorted_diagnostics(sink.items), select, ignore)
    return CheckResult(source, kernels, diagnostics, facts, targets)
