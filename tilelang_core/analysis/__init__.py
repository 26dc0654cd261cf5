"""The checks and the facts: `analyze(kernels, targets, sink)` walks every kernel instance's tile IR once
for the rules, computes per-block budgets per target, reports diagnostics and returns Facts. Pure Python."""
from __future__ import annotations

from ..ir import nodes as N
from . import checks  # noqa: F401  (registers the rules)
from . import walker
from .facts import Facts, buffer_fact, collect_uses, kernel_fact
from .resources import budget, check_launch
from .targets import DEFAULT_TARGET, parse_targets

__all__ = ["analyze", "Facts", "parse_targets", "DEFAULT_TARGET"]


def analyze(kernels, targets=(DEFAULT_TARGET,), sink=None) -> Facts:
    """Run every check on every kernel instance; return the facts for hover and inlay hints."""
    from ..diagnostics import DiagnosticSink

    sink = sink if sink is not None else DiagnosticSink()
    targets = tuple(targets) or (DEFAULT_TARGET,)
    facts = Facts()
    for func in kernels:
        try:
            _analyze_one(func, targets, sink, facts)
        except RecursionError:
            continue
    return facts


def _analyze_one(func: N.PrimFunc, targets, sink, facts: Facts) -> None:
    walker.run(func, sink)
    launches = [n for n in _launches(func.body)]
    by_buf: dict = {}
    for p in func.params:
        if isinstance(p, N.Buffer):
            by_buf[p] = buffer_fact(p, func)
    for launch in launches or [None]:
        b = budget(launch) if launch is not None else None
        if launch is not None:
            check_launch(launch, b, targets, walker.Ctx(func, sink))
            stages = {buf: s for buf, _, s in b.shared}
            for node in _allocations(launch.body):
                by_buf[node.buffer] = buffer_fact(node.buffer, func, stages.get(node.buffer, 1))
        facts.kernels.append(kernel_fact(func, launch, b, targets))
    collect_uses(func, by_buf)
    facts.buffers.extend(by_buf.values())


def _launches(body):
    from ..ir.visitor import walk

    return [n for n in walk(body) if isinstance(n, N.Launch)]


def _allocations(body):
    from ..ir.visitor import walk

    return [n for n in walk(body) if isinstance(n, N.Allocate)]
