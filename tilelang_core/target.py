"""`Target`: what a kernel is built for, parsed once from any spelling users write, with its limits and abilities.

Every layer asks this module; nothing else parses a target. Spellings (case-insensitive):

- "sm_90a", "SM_90A", "90a", "sm_80", "compute_90" (-> sm_90), "cuda:sm_80", "cuda -arch=sm_80 ..." (TVM's old
  string), {"kind": "cuda", "arch": "sm_90a"} (TileLang's and TVM's dict), a `tvm.target.Target` (duck-typed:
  `.kind.name` and `.attrs["arch"]`; never imported here);
- "9.0" / "8.6": a device's compute capability -> the best arch for that device (sm_90a for 9.0, as the JIT
  builds for the device it finds);
- "cuda" and "auto": the machine's device when the caller knows it (`device=`, the JIT asks torch), otherwise
  the default target, sm_90a; "auto" on a machine without a GPU is the CPU backend;
- "cpu", "llvm" (with any "-mcpu=..."), "c": the CPU backend.

Architecture limits from NVIDIA's CUDA C++ Programming Guide, appendix "Compute Capabilities", table "Technical
Specifications per Compute Capability": the shared memory one block may opt into
(cudaFuncAttributeMaxDynamicSharedMemorySize) is 163 KB on 8.0, 99 KB on 8.6/8.9 and 227 KB on 9.0; 1024 threads
per block, 255 32-bit registers per thread and warps of 32 threads on all of them; 48 KB of static shared memory
without the opt-in; thread-block clusters of up to 8 blocks (portable size) from 9.0 on. The abilities below are
the ones this compiler emits: cp.async and mma.sync from 8.0, fp8 tensor-core types from 8.9, TMA, mbarrier
transaction counts and clusters from 9.0, wgmma and setmaxnreg only on the arch-specific sm_90a.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

KIB = 1024

# abilities a codegen decision may ask for (`Target.has`)
CP_ASYNC = "cp_async"      # cp.async global -> shared copies
MMA_SYNC = "mma_sync"      # warp-wide mma.sync tensor cores, ldmatrix
BF16 = "bf16"              # bf16 arithmetic and tensor-core inputs
FP8 = "fp8"                # e4m3 / e5m2 types in hardware
TMA = "tma"                # bulk tensor copies (cp.async.bulk.tensor) with tensor maps
MBARRIER_TX = "mbarrier_tx"  # mbarriers with expected transaction bytes
CLUSTERS = "clusters"      # thread-block clusters, distributed shared memory
WGMMA = "wgmma"            # warpgroup MMA (wgmma.mma_async), arch-specific: sm_90a only
SETMAXNREG = "setmaxnreg"  # per-warpgroup register budgets, arch-specific: sm_90a only

_AMPERE = frozenset({CP_ASYNC, MMA_SYNC, BF16})
_HOPPER = _AMPERE | {FP8, TMA, MBARRIER_TX, CLUSTERS}


@dataclass(frozen=True)
class Arch:
    """One supported GPU architecture: its limits per thread block and the abilities this compiler uses."""

    name: str                 # "sm_90a"
    capability: tuple         # (major, minor) of the devices it runs on
    smem_per_block: int       # bytes of shared memory one block may opt into
    features: frozenset = frozenset()
    threads_per_block: int = 1024
    registers_per_thread: int = 255
    warp_size: int = 32
    static_smem: int = 48 * KIB
    max_cluster_size: int = 1  # blocks per cluster (portable size); 1: no clusters

    @property
    def arch_specific(self) -> bool:
        """An "a" arch (sm_90a): its code runs on that compute capability only (nvcc's -gencode form)."""
        return self.name.endswith("a")


ARCHS: dict[str, Arch] = {a.name: a for a in (
    # Turing: no cp.async, no m16n8k16 mma.sync, bfloat16 through cuda_bf16.h's emulation; kernels without T.gemm,
    # multi-stage T.Pipelined loops or cp.async intrinsics (codegen/cuda/kernel_plan.py refuses those at the line)
    Arch("sm_75", (7, 5), 64 * KIB, frozenset()),
    Arch("sm_80", (8, 0), 163 * KIB, _AMPERE),
    Arch("sm_86", (8, 6), 99 * KIB, _AMPERE),
    Arch("sm_89", (8, 9), 99 * KIB, _AMPERE | {FP8}),
    Arch("sm_90", (9, 0), 227 * KIB, _HOPPER, max_cluster_size=8),
    Arch("sm_90a", (9, 0), 227 * KIB, _HOPPER | {WGMMA, SETMAXNREG}, max_cluster_size=8),
)}

DEFAULT_ARCH = "sm_90a"
CPU = "cpu"
_CPU_NAMES = ("cpu", "llvm", "c")


class UnknownTargetError(ValueError):
    """A target spelling that names no supported architecture or backend."""


@dataclass(frozen=True)
class Target:
    """A parsed target: the CPU backend, or CUDA on one architecture of `ARCHS`."""

    kind: str          # "cuda" | "cpu"
    arch_name: str = ""  # "sm_90a" for CUDA, "" for the CPU

    @property
    def is_cpu(self) -> bool:
        """The CPU backend (LLVM through TVM)."""
        return self.kind == CPU

    @property
    def is_cuda(self) -> bool:
        """A CUDA architecture."""
        return self.kind == "cuda"

    @property
    def name(self) -> str:
        """The canonical spelling ("sm_90a", "cpu"): what every `arch: str` parameter and cache key carries."""
        return self.arch_name or CPU

    @property
    def arch(self) -> Arch:
        """The architecture's row of `ARCHS` (looked up on each use, so a test may patch the table)."""
        if not self.is_cuda:
            raise ValueError("the CPU target has no GPU architecture")
        return ARCHS[self.arch_name]

    def has(self, feature: str) -> bool:
        """Whether code for this target may use `feature` (one of the ability names above)."""
        return self.is_cuda and feature in self.arch.features

    def __str__(self) -> str:
        return self.name


def supported() -> str:
    """The supported spellings, for error messages."""
    return ", ".join(ARCHS) + ", cuda, auto or cpu"


def parse_target(spec=None, device=None) -> Target:
    """The Target for any accepted spelling (module docstring); raises UnknownTargetError naming the supported
    ones. `device`: a function giving the spelling of this machine's device ("sm_90a", "9.0" or "cpu"), called
    only for "auto" and "cuda"; without it they mean the default target."""
    if isinstance(spec, Target):
        return spec
    if spec is None:
        spec = "auto"
    if isinstance(spec, dict):
        return _from_dict(spec, device)
    kind = getattr(spec, "kind", None)
    if kind is not None and hasattr(kind, "name"):  # a tvm.target.Target
        attrs = getattr(spec, "attrs", {}) or {}
        return _from_dict({"kind": kind.name, "arch": attrs.get("arch") if hasattr(attrs, "get") else None}, device)
    return _from_text(str(spec), device)


def parse_targets(text) -> tuple[str, ...]:
    """Canonical names of a comma-separated list ("sm_90a,sm_80") or a sequence; empty gives the default."""
    parts = text.split(",") if isinstance(text, str) else list(text or ())
    names: list[str] = []
    for part in parts:
        name = canonical(part) if str(part).strip() else None
        if name and name not in names:
            names.append(name)
    return tuple(names) or (DEFAULT_ARCH,)


def gpu_archs(targets) -> list[Arch]:
    """The architecture rows of the CUDA targets among `targets` (the CPU has no GPU budgets)."""
    found = (parse_target(t) for t in targets)
    return [t.arch for t in found if t.is_cuda]


def canonical(spec=None) -> str:
    """The canonical name ("sm_90a", "cpu") of a spelling without a device: what `arch: str` parameters get."""
    return parse_target(spec).name


def from_capability(major: int, minor: int) -> Target:
    """The best target for a device of this compute capability (9.0 -> sm_90a: its arch-specific features)."""
    rows = [a for a in ARCHS.values() if a.capability == (major, minor)]
    if not rows:
        raise UnknownTargetError(f"unknown target: a device of compute capability {major}.{minor}; known targets: "
                                 f"{supported()}")
    best = next((a for a in rows if a.arch_specific), rows[0])
    return Target("cuda", best.name)


def _from_dict(spec: dict, device) -> Target:
    kind = str(spec.get("kind", "cuda")).strip().lower()
    if kind in _CPU_NAMES:
        return Target(CPU)
    if kind != "cuda":
        raise UnknownTargetError(f"unknown target {spec!r}; known targets: {supported()}")
    arch = spec.get("arch")
    return _from_text(str(arch), device) if arch else _from_text("cuda", device)


@functools.lru_cache(maxsize=256)
def _static(text: str) -> Target:
    """A spelling that does not depend on the machine, parsed once."""
    t = text.strip().lower()
    if t in _CPU_NAMES or t.startswith("llvm ") or t.startswith("c "):
        return Target(CPU)
    m = re.search(r"-arch=(\S+)", t)
    if t.startswith("cuda") and m:
        t = m.group(1)
    elif t.startswith("cuda:"):
        t = t[len("cuda:"):]
    m = re.fullmatch(r"(\d+)\.(\d+)", t)
    if m:
        return from_capability(int(m.group(1)), int(m.group(2)))
    if t.startswith("compute_"):
        t = "sm_" + t[len("compute_"):]
    elif t[:1].isdigit():
        t = "sm_" + t
    if t not in ARCHS:
        raise UnknownTargetError(f"unknown target {text.strip()!r}{_why_not(t)}; known targets: {supported()}")
    return Target("cuda", t)


def _why_not(name: str) -> str:
    """Why a well-formed NVIDIA architecture ("sm_75", "sm_100a") is not a target, or '' for any other spelling."""
    m = re.fullmatch(r"sm_(\d+)(\d)a?", name)
    if m is None:
        return ""
    major = int(m.group(1))
    if (major, int(m.group(2))) < (7, 5):
        return (f" (compute capability {major}.{m.group(2)}): the code generator needs sm_75 or newer (sm_80 for "
                "T.gemm and pipelined copies: cp.async, m16n8k16 mma.sync)")
    if major >= 10:
        return f" (compute capability {major}.{m.group(2)}): sm_100 and newer (tcgen05, TMEM) are not targets yet"
    return ""


def _from_text(text: str, device) -> Target:
    t = text.strip().lower()
    if t in ("auto", "cuda", ""):
        found = _from_text(str(device()), None) if device is not None else None
        if found is not None and (found.is_cuda or t == "auto"):
            return found
        return Target("cuda", DEFAULT_ARCH)
    return _static(text)
