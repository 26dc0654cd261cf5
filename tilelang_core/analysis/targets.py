"""Per-architecture resource limits that the checks compare against, and `--target` parsing.

Figures from NVIDIA's CUDA C++ Programming Guide, appendix "Compute Capabilities", table
"Technical Specifications per Compute Capability"
(https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html):
maximum shared memory per thread block with the dynamic opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize)
is 96 KB on 7.0, 64 KB on 7.5, 163 KB on 8.0/8.7, 99 KB on 8.6/8.9 and 227 KB on 9.0; 1024 threads per
block, 255 32-bit registers per thread and a warp of 32 threads on all of them; 48 KB of static shared
memory without the opt-in.
"""
from __future__ import annotations

from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class ArchLimits:
    """Hardware limits of one compute capability, per thread block."""

    name: str
    smem_per_block: int  # bytes, dynamic shared memory with the opt-in
    threads_per_block: int = 1024
    registers_per_thread: int = 255
    warp_size: int = 32
    static_smem: int = 48 * KIB


ARCHS: dict[str, ArchLimits] = {
    a.name: a
    for a in (
        ArchLimits("sm_70", 96 * KIB),
        ArchLimits("sm_75", 64 * KIB),
        ArchLimits("sm_80", 163 * KIB),
        ArchLimits("sm_86", 99 * KIB),
        ArchLimits("sm_87", 163 * KIB),
        ArchLimits("sm_89", 99 * KIB),
        ArchLimits("sm_90", 227 * KIB),
        ArchLimits("sm_90a", 227 * KIB),
    )
}

DEFAULT_TARGET = "sm_90a"


class UnknownTargetError(ValueError):
    """A `--target` name that is not a known architecture."""


def _normalise(name: str) -> str:
    n = name.strip().lower()
    for prefix in ("cuda:", "cuda -arch=", "-arch="):
        if n.startswith(prefix):
            n = n[len(prefix):]
    if n.startswith("compute_"):
        n = "sm_" + n[len("compute_"):]
    if n[:1].isdigit():
        n = "sm_" + n.replace(".", "")
    return n


def limits(target: str) -> ArchLimits:
    """The limits of one architecture ("sm_90a", "sm_80", ...); raises UnknownTargetError."""
    name = _normalise(target)
    if name not in ARCHS:
        known = ", ".join(ARCHS)
        raise UnknownTargetError(f"unknown target '{target}'; known targets: {known}")
    return ARCHS[name]


def parse_targets(text) -> tuple[str, ...]:
    """Parse "sm_90a,sm_80" (or a list of names) into normalised arch names; empty gives the default."""
    parts = text.split(",") if isinstance(text, str) else list(text or ())
    names: list[str] = []
    for part in parts:
        if not str(part).strip():
            continue
        name = limits(str(part)).name
        if name not in names:
            names.append(name)
    return tuple(names) or (DEFAULT_TARGET,)


def known_limits(targets) -> list[ArchLimits]:
    """Limits for each target that is known; unknown names are skipped (parse_targets reports them)."""
    out = []
    for t in targets:
        try:
            out.append(limits(t))
        except UnknownTargetError:
            continue
    return out
