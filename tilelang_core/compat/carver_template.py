"""`tilelang.carver.template` and `tilelang.carver.roller`: GEMM tile hints for autotuning configs.

`MatmulTemplate(M=, N=, K=, ...).with_arch(CUDA("cuda")).recommend_hints(topk)` returns `Hint`s with the fields
TileLang examples read (`block`, `warp`, `rstep`, `pipeline_stage`, `rasterization_plan`, `use_tc`). The ranking
is a small roofline model of our own (tile traffic against wave-quantised tensor-core work within the device's
shared-memory budget), not TileLang's roller: good enough to pick sensible candidates for an autotuner.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..language.dtypes import dtype_bits

__all__ = ["MatmulTemplate", "Hint", "Rasterization", "NoRasterization", "Rasterization2DRow",
           "Rasterization2DColumn"]


class Rasterization:
    """How thread blocks are ordered for L2 locality."""

    panel_width_ = None

    @property
    def panel_width(self):
        """Blocks per panel."""
        return self.panel_width_


class NoRasterization(Rasterization):
    """Blocks in launch order."""

    def __repr__(self) -> str:
        return "<NoRasterization>"


class Rasterization2DRow(Rasterization):
    """Row panels of `panel_width` blocks (`T.use_swizzle`)."""

    def __init__(self, panel_width: int = 4):
        self.panel_width_ = panel_width

    def __repr__(self) -> str:
        return f"<Rasterization2DRow({self.panel_width_})>"


class Rasterization2DColumn(Rasterization2DRow):
    """Column panels of `panel_width` blocks."""

    def __repr__(self) -> str:
        return f"<Rasterization2DColumn({self.panel_width_})>"


@dataclass
class Hint:
    """One tiling: block [M, N] tile, warp [M, N] tile, rstep [K tile], pipeline stages, block order."""

    block: list = field(default_factory=list)
    warp: list = field(default_factory=list)
    rstep: list = field(default_factory=list)
    pipeline_stage: int = 1
    rasterization_plan: Rasterization = field(default_factory=NoRasterization)
    use_tc: bool = True
    cost: float = 0.0

    @property
    def threads(self) -> int:
        """Threads per block implied by the warp partition."""
        return (self.block[0] // self.warp[0]) * (self.block[1] // self.warp[1]) * 32

    def to_dict(self) -> dict:
        """The hint as TileLang prints it."""
        return {"block": self.block, "warp": self.warp, "rstep": self.rstep, "use_tc": self.use_tc,
                "pipeline_stage": self.pipeline_stage}

    def __repr__(self) -> str:
        return str(self.to_dict())


@dataclass
class MatmulTemplate:
    """C[M, N] = A[M, K] @ B[K, N] (B given as [N, K] when trans_B), the computation hints are made for."""

    M: int = None
    N: int = None
    K: int = None
    trans_A: bool = False
    trans_B: bool = True
    in_dtype: str = "float16"
    out_dtype: str = "float16"
    accum_dtype: str = "float16"
    with_bias: bool = False
    arch: object = None

    def with_arch(self, arch):
        """Use this device model (`tilelang.carver.arch.CUDA`)."""
        self.arch = arch
        return self

    def equivalent_function(self) -> str:
        """The computation, as text."""
        a = "A[k, i]" if self.trans_A else "A[i, k]"
        b = "B[j, k]" if self.trans_B else "B[k, j]"
        bias = " + Bias[j]" if self.with_bias else ""
        return (f"C[i, j] = {self.out_dtype}(sum_k {self.accum_dtype}({a}) * {self.accum_dtype}({b}){bias}) "
                f"for i < {self.M}, j < {self.N}, k < {self.K}")

    def recommend_hints(self, topk: int = 10) -> list[Hint]:
        """The `topk` best tilings for this GEMM on the template's arch."""
        if not all(isinstance(v, int) and v > 0 for v in (self.M, self.N, self.K)):
            raise ValueError(f"MatmulTemplate needs positive integer M, N, K, got {self.M}, {self.N}, {self.K}")
        if self.arch is None:
            from .carver import auto_infer_current_arch

            self.arch = auto_infer_current_arch()
        hints = sorted(self._candidates(), key=lambda h: h.cost)
        return hints[:topk]

    def get_hardware_aware_configs(self, arch=None, topk: int = 10) -> list[Hint]:
        """`recommend_hints` on `arch`."""
        if arch is not None:
            self.arch = arch
        return self.recommend_hints(topk)

    def _candidates(self):
        elem = (dtype_bits(str(self.in_dtype)) or 16) / 8
        for bm in _tiles(self.M):
            for bn in _tiles(self.N):
                for bk in (k for k in (32, 64, 128) if k <= max(32, self.K)):
                    hint = self._hint(bm, bn, bk, elem)
                    if hint is not None:
                        yield hint

    def _hint(self, bm: int, bn: int, bk: int, elem: float) -> Hint | None:
        arch = self.arch
        stage_bytes = (bm + bn) * bk * elem
        budget = arch.max_smem_usage
        if stage_bytes > budget:
            return None
        stages = min(4, int(budget // stage_bytes))
        warps = (2, 2) if bm * bn < 128 * 128 else ((4, 2) if bm >= bn else (2, 4))
        if bm // warps[0] < 16 or bn // warps[1] < 16:
            warps = (1, 1)
        blocks = math.ceil(self.M / bm) * math.ceil(self.N / bn)
        per_sm = max(1, min(4, int(budget // (stage_bytes * stages))))
        waves = math.ceil(blocks / (arch.compute_max_core * per_sm))
        compute = waves * bm * bn * self.K / 1024.0  # wave-quantised tensor-core work
        traffic = self.M * self.N * self.K * elem * (1 / bm + 1 / bn) / 64.0  # global loads of A and B tiles
        raster = Rasterization2DRow(10) if blocks > arch.compute_max_core else NoRasterization()
        return Hint([bm, bn], [bm // warps[0], bn // warps[1]], [bk], stages, raster, True,
                    cost=max(compute, traffic) + 1e-3 * (bm + bn))


def _tiles(extent: int) -> list[int]:
    sizes = [t for t in (16, 32, 64, 128, 256) if t <= max(16, extent)]
    return sizes[-4:]
