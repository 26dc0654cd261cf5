"""Facts for hover and inlay hints: one BufferFact per buffer and one KernelFact per kernel instance,
with `Facts.at(line, col)` finding the innermost fact under a position."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.printer import expr_str
from ..source import Span
from ..target import gpu_archs
from .infer import buffer_bytes
from .resources import Budget


@dataclass
class BufferFact:
    """A parameter or allocated buffer: where it is declared and used, its shape, dtype and size."""

    name: str
    scope: str
    shape: tuple
    dtype: str
    bytes: int | None
    span: Span | None
    kernel: str
    instance: str = ""
    uses: list = field(default_factory=list)
    stages: int = 1


@dataclass
class KernelFact:
    """A kernel instance: launch shape, threads, shared memory per target, register estimate."""

    name: str
    factory: str | None
    instance: str
    span: Span | None
    name_span: Span | None
    launch_span: Span | None = None
    grid: tuple = ()
    threads: int | None = None
    smem_bytes: dict = field(default_factory=dict)
    smem_breakdown: list = field(default_factory=list)
    smem_limit: dict = field(default_factory=dict)
    registers: int | None = None


@dataclass
class Facts:
    """Everything hover/inlay need about one file, for all kernel instances."""

    buffers: list = field(default_factory=list)
    kernels: list = field(default_factory=list)

    def at(self, line: int, col: int):
        """The innermost fact whose span (declaration or a use) contains the position, else None."""
        best, best_size = None, None
        for fact, span in self._spans():
            if span is not None and span.contains(line, col):
                if best_size is None or span.size() < best_size:
                    best, best_size = fact, span.size()
        return best

    def _spans(self):
        for b in self.buffers:
            yield b, b.span
            for u in b.uses:
                yield b, u
        for k in self.kernels:
            yield k, k.name_span
            yield k, k.launch_span
            yield k, k.span

    def kernel(self, name: str) -> list:
        """The KernelFacts (one per instance) of a kernel name."""
        return [k for k in self.kernels if k.name == name]


def _dim(e):
    v = as_int(e)
    return v if v is not None else expr_str(e)


def buffer_fact(buf: N.Buffer, func: N.PrimFunc, stages: int = 1) -> BufferFact:
    """The fact for one buffer of a kernel instance (uses are filled in by `collect_uses`)."""
    return BufferFact(buf.name, buf.scope, tuple(_dim(d) for d in buf.shape), buf.dtype, buffer_bytes(buf),
                      buf.span, func.name, func.instance, stages=stages)


def kernel_fact(func: N.PrimFunc, launch: N.Launch | None, b: Budget | None, targets) -> KernelFact:
    """The fact for one kernel instance."""
    k = KernelFact(func.name, func.factory, func.instance, func.span, func.name_span)
    if launch is None or b is None:
        return k
    k.launch_span = launch.span
    k.grid = tuple(_dim(g) for g in launch.grid)
    k.threads = b.threads
    k.registers = b.registers
    k.smem_breakdown = b.breakdown
    total = b.smem_total()
    for lim in gpu_archs(targets):
        k.smem_bytes[lim.name] = total
        k.smem_limit[lim.name] = lim.smem_per_block
    return k
