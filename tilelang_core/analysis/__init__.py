"""The checks and the facts: `analyze(kernels, targets, sink)` walks every kernel instance's tile IR once
for the rules, computes per-block budgets per target, reports diagnostics and returns Facts. Pure Python."""
from __future__ import annotations

from ..ir import nodes as N
from . import checks  # noqa: F401  (registers the rules)
from . import walker
from .facts import Facts, buffer_fact, kernel_fact
from .checks.wgmma_arch import check_wgmma_targets
from .index import index_kernel
from .resources import budget, check_launch
from ..target import DEFAULT_ARCH

__all__ = ["analyze", "Facts"]


def analyze(kernels, targets=(DEFAULT_ARCH,), sink=None) -> Facts:
    """Run every check on every kernel instance; return the facts for hover and inlay hints."""
    from ..diagnostics import DiagnosticSink, internal_message

    sink = sink if sink is not None else DiagnosticSink()
    targets = tuple(targets) or (DEFAULT_ARCH,)
    facts = Facts()
    for func in kernels:
        try:
            _analyze_one(func, targets, sink, facts)
        except RecursionError:
            walker.Ctx(func, sink).emit("unsupported-syntax", "the kernel is nested too deeply to analyse; split the "
                                        "deepest expression", func.span)
        except Exception as exc:  # noqa: BLE001 - bad input must never crash the checker
            walker.Ctx(func, sink).emit("internal-error", internal_message(f"while analysing `{func.name}`", exc),
                                        func.span)
    return facts


def _analyze_one(func: N.PrimFunc, targets, sink, facts: Facts) -> None:
    walker.run(func, sink)
    check_wgmma_targets(func, targets, walker.Ctx(func, sink))
    ix = index_kernel(func)
    by_buf: dict = {}
    for p in func.params:
        if isinstance(p, N.Buffer):
            by_buf[p] = buffer_fact(p, func)
    for launch in ix.launches or [None]:
        b = budget(launch, ix) if launch is not None else None
        if launch is not None:
            check_launch(launch, b, targets, walker.Ctx(func, sink))
            stages = {buf: s for buf, _, s in b.shared}
            for node in ix.allocations.get(id(launch), ()):
                by_buf[node.buffer] = buffer_fact(node.buffer, func, stages.get(node.buffer, 1))
        facts.kernels.append(kernel_fact(func, launch, b, targets))
    for buf, fact in by_buf.items():
        fact.uses.extend(ix.uses.get(buf, ()))
    facts.buffers.extend(by_buf.values())
