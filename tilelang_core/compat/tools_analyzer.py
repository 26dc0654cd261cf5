"""`tilelang.tools.Analyzer`: FLOPs, global-memory bytes and a roofline time estimate of a kernel, read off
its tile IR (`kernel.get_tir(...)`) the way TileLang's Analyzer reads its TIR.

Every T.gemm counts 2*M*N*K and every T.copy with a global side counts the bytes of its tile, each multiplied by
the extents of the loops around it and by the blocks of the grid's first two axes (blockIdx.x, blockIdx.y).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.visitor import children
from ..language.dtypes import dtype_bits

# compute capability -> (FP32 cores per SM, clock in GHz, FLOPs per core per cycle, SMs): the figures
# TileLang's Analyzer knows; other devices get no compute peak (the estimate is then memory time alone)
ARCH_CONFIGS = {"80": (128, 1.41, 2, 108), "86": (128, 1.70, 2, 84), "89": (128, 2.52, 2, 128)}

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnalysisResult:
    """What `Analyzer.analysis` found: totals over the whole grid and the roofline estimate."""

    total_flops: int
    total_global_bytes: int
    estimated_time: float
    expected_tflops: float | None
    expected_bandwidth_GBps: float


class Analyzer:
    """Counts a tile-IR PrimFunc's FLOPs and global-memory traffic for a carver device (`CUDA("cuda")`)."""

    def __init__(self, fn, device):
        if not isinstance(fn, N.PrimFunc):
            raise TypeError(f"Analyzer needs the PrimFunc of a kernel (kernel.get_tir(...)), got {type(fn).__name__}")
        self.fn, self.device = fn, device
        self.total_flops = 0
        self.total_global_bytes = 0

    def ir_pass(self) -> "Analyzer":
        """Walk the kernel body, adding up gemm FLOPs and global copy bytes."""
        self._visit(self.fn.body, 1, 1)
        return self

    def _visit(self, node, loops: int, blocks: int) -> None:
        if isinstance(node, N.Launch):
            blocks = math.prod(_static(g, "grid extent") for g in node.grid[:2])
        elif isinstance(node, N.For) and node.kind != "parallel":
            loops *= math.prod(_static(e, "loop extent") for e in node.extents)
        elif isinstance(node, N.Gemm):
            self.total_flops += _gemm_flops(node) * loops * blocks
            return
        elif isinstance(node, N.Copy):
            self.total_global_bytes += _copy_bytes(node) * loops * blocks
            return
        for child in children(node):
            self._visit(child, loops, blocks)

    def calculate(self) -> AnalysisResult:
        """The totals and a roofline time: the larger of memory time and compute time (when the peak is known)."""
        bandwidth_gbps = self.device.bandwidth[1] / 1000
        config = ARCH_CONFIGS.get(str(self.device.compute_capability)[:2])
        peak = None
        if config is None:
            logger.info("no FLOP peak known for compute capability %s; the estimate is memory time alone",
                        self.device.compute_capability)
        else:
            cores, clock, per_cycle, sms = config
            peak = round(sms * cores * clock * per_cycle / 1e3, 1)
        mem_time = self.total_global_bytes / (bandwidth_gbps * 1e9)
        compute_time = self.total_flops / (peak * 1e12) if peak else 0.0
        return AnalysisResult(self.total_flops, self.total_global_bytes, max(mem_time, compute_time), peak,
                              bandwidth_gbps)

    @classmethod
    def analysis(cls, fn, device) -> AnalysisResult:
        """Analyse `fn` (a PrimFunc from `kernel.get_tir(...)`) for `device`."""
        return cls(fn, device).ir_pass().calculate()


def _static(e, what: str) -> int:
    v = as_int(e)
    if v is None:
        raise ValueError(f"Analyzer needs a static {what}; pass every dim to get_tir (got {e!r})")
    return v


def _extents(region: N.Region) -> list:
    axes = [a.extent for a in region.axes if a.sliced] if region.axes else list(region.buffer.shape)
    return axes if region.kind != "point" else []


def _gemm_flops(g: N.Gemm) -> int:
    m, n = (_static(d, "gemm extent") for d in _extents(g.c)[-2:])
    a = [_static(d, "gemm extent") for d in _extents(g.a)[-2:]]
    k = a[0] if g.transpose_a else a[-1]
    return 2 * m * n * k


def _copy_bytes(c: N.Copy) -> int:
    """Bytes a copy moves to or from global memory (0 for on-chip copies); a point side takes the other's tile."""
    side = c.src if c.src.buffer.scope == "global" else c.dst if c.dst.buffer.scope == "global" else None
    if side is None:
        return 0
    other = c.dst if side is c.src else c.src
    tile = _extents(side) or _extents(other)
    return math.prod(_static(d, "copy extent") for d in tile) * (dtype_bits(side.buffer.dtype) or 8) // 8
