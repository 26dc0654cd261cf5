"""Kernel artifacts: CUDA source + cubin + launch configuration + parameters, built with nvcc and cached.

An artifact is plain data (JSON-able metadata and bytes); `runtime.launch` runs it without tvm.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..options import codegen_options, kernel_configs
from ..target import DEFAULT_ARCH, canonical, parse_target
from .cache import ArtifactCache, sha256

FORMAT = 1


@dataclass
class Artifact:
    """One compiled kernel instance for one GPU architecture."""

    name: str
    kernel_symbol: str
    arch: str
    source: str
    cubin: bytes
    grid: list            # int or Python expression over dim names (e.g. "T.ceildiv(M, 128)")
    block: list
    smem_bytes: int
    params: list          # {name, kind: tensor|scalar|dim, dtype, shape, is_output}
    content_hash: str = ""
    nvcc_version: str = ""
    instance: str = ""
    line_map: list = field(default_factory=list)
    # several T.Kernel blocks (or a workspace): {kernel_symbol, grid, block, smem_bytes, params} per launch, in
    # order, and the T.alloc_global buffers the launcher allocates, {name, dtype, shape}; [] for one plain kernel
    launches: list = field(default_factory=list)
    workspaces: list = field(default_factory=list)
    tensor_maps: list = field(default_factory=list)  # TMA maps the launcher encodes (codegen/cuda/tma.py)
    cooperative: bool = False  # T.sync_grid: a cooperative launch, all blocks resident at once (runtime.launch)
    persistent: bool = False  # a tile loop over `grid` tiles: the launcher starts at most the resident blocks
    cluster: int = 1  # blocks per cluster, compiled in (__cluster_dims__): the launcher keeps the grid a multiple

    def meta(self) -> dict:
        """Metadata without the source and cubin."""
        d = asdict(self)
        d.pop("source"), d.pop("cubin")
        d["format"] = FORMAT
        return d

    def save(self, folder: str | Path) -> Path:
        """Write <name>.json/.cu/.cubin into `folder` (for carrying to a GPU machine)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{self.name}_{self.content_hash[:10]}"
        stem.with_suffix(".cu").write_text(self.source)
        stem.with_suffix(".cubin").write_bytes(self.cubin)
        stem.with_suffix(".json").write_text(json.dumps(self.meta(), indent=1))
        return stem.with_suffix(".json")

    @classmethod
    def load(cls, meta_path: str | Path) -> "Artifact":
        """Read an artifact written by `save`."""
        p = Path(meta_path)
        meta = json.loads(p.read_text())
        meta.pop("format", None)
        meta.pop("cubin_sha256", None), meta.pop("cubin_size", None)
        return cls(source=p.with_suffix(".cu").read_text(), cubin=p.with_suffix(".cubin").read_bytes(), **meta)

    def launch_plan(self) -> list:
        """The kernel launches in order: `launches`, or the one kernel the top-level fields describe."""
        return self.launches or [{"kernel_symbol": self.kernel_symbol, "grid": self.grid, "block": self.block,
                                  "smem_bytes": self.smem_bytes, "params": self.params,
                                  **({"tensor_maps": self.tensor_maps} if self.tensor_maps else {}),
                                  **({"cooperative": True} if self.cooperative else {}),
                                  **({"persistent": True} if self.persistent else {}),
                                  **({"cluster": self.cluster} if self.cluster > 1 else {})}]

    def grid_for(self, dims: dict, grid: list | None = None) -> tuple[int, int, int]:
        """The launch grid (the first kernel's unless `grid` is given) with symbolic dims bound."""
        out = [_eval_dim(g, dims) for g in (self.grid if grid is None else grid)]
        return tuple(out + [1] * (3 - len(out)))[:3]

    def workspace_shapes(self, dims: dict) -> list:
        """(name, dtype, shape) of every workspace with symbolic dims bound."""
        return [(w["name"], w["dtype"], tuple(_eval_dim(d, dims) for d in w["shape"])) for w in self.workspaces]


class _TNamespace:
    @staticmethod
    def ceildiv(a, b):
        return -(-a // b)

    max, min = staticmethod(max), staticmethod(min)


def _eval_dim(expr, dims: dict) -> int:
    if isinstance(expr, int):
        return expr
    return int(eval(_compiled(expr), {"__builtins__": {}}, dict(dims, T=_TNamespace)))  # noqa: S307  (our printer's)


@functools.lru_cache(maxsize=4096)
def _compiled(expr: str):
    """A grid or shape expression compiled once (every launch evaluates its grid)."""
    return compile(expr, "<dim>", "eval")


@functools.lru_cache(maxsize=1)
@functools.lru_cache(maxsize=1)
def nvcc_version() -> str:
    """`nvcc --version`'s release line ('' when nvcc is missing); asked once per process (each cached kernel's
    lookup compares it)."""
    exe = shutil.which("nvcc")
    if exe is None:
        return ""
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1] if out else ""


def arch_flags(arch: str) -> list[str]:
    """nvcc flags for an arch; an arch-specific one (sm_90a: wgmma, setmaxnreg) needs the -gencode form."""
    target = parse_target(arch)
    if target.arch.arch_specific:
        return [f"-gencode=arch=compute_{target.name[3:]},code={target.name}"]
    return [f"-arch={target.name}"]


class NvccError(Exception):
    """nvcc rejected a generated source."""


COMPILE_TIMEOUT_ENV = "TILELANG_COMPILE_TIMEOUT_SECONDS"


def compile_timeout_seconds() -> float | None:
    """The bound on one nvcc run, in seconds, from TILELANG_COMPILE_TIMEOUT_SECONDS (TileLang's setting): None
    when it is unset, blank or 0 (no bound); a ValueError naming the setting when it is not a finite number >= 0."""
    raw = os.environ.get(COMPILE_TIMEOUT_ENV, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{COMPILE_TIMEOUT_ENV}={raw!r}: give a number of seconds (0 or empty: no limit)")
    return seconds or None


def compile_cubin(source: str, arch: str) -> bytes:
    """Compile CUDA source to a cubin with nvcc (bounded by `compile_timeout_seconds`)."""
    from ..codegen.cuda.fastmath import nvcc_flags

    exe = shutil.which("nvcc")
    if exe is None:
        raise NvccError("nvcc is not on PATH; install the CUDA toolkit to build cubins")
    with tempfile.TemporaryDirectory(prefix="tilelsp-nvcc-") as tmp:
        cu, out = Path(tmp) / "kernel.cu", Path(tmp) / "kernel.cubin"
        cu.write_text(source)
        cmd = [exe, "-cubin", "-O3", "-std=c++17", "-w", *arch_flags(arch), *nvcc_flags(source), "-o", str(out),
               str(cu)]
        timeout = compile_timeout_seconds()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise NvccError(f"nvcc for {arch} timed out after {timeout:g} seconds ({COMPILE_TIMEOUT_ENV}); raise "
                            "it, or set it to 0 for no limit") from None
        if p.returncode < 0:  # killed: say so (an empty message hid an OOM kill under memory pressure)
            raise NvccError(f"nvcc for {arch} was killed by signal {-p.returncode}"
                            f"{' (out of memory?)' if p.returncode == -9 else ''}; try again")
        if p.returncode != 0:
            raise NvccError(f"nvcc failed for {arch}:\n{p.stderr[-4000:]}")
        return out.read_bytes()


@functools.lru_cache(maxsize=1)
def compiler_version() -> str:
    """A digest of this compiler's own sources and the apache-tvm it is pinned to: a cache entry made by any other
    build of the compiler never matches. Computable without tvm or nvcc, so a GPU machine without them finds the
    artifacts built elsewhere; the nvcc that built a cubin is checked at lookup (`_builder_matches`)."""
    from .. import __version__
    from ..codegen.tvm_loader import REQUIRED_VERSION

    root = Path(__file__).resolve().parents[1]
    sources = [(str(p.relative_to(root)), p.read_bytes()) for p in sorted(root.rglob("*.py"))]
    return sha256(__version__, REQUIRED_VERSION, *[part for pair in sources for part in pair])


def _builder_matches(meta: dict) -> bool:
    """A cached cubin serves when this machine cannot build one (no nvcc or no tvm), or when its nvcc is the one
    that built it."""
    from ..codegen.tvm_loader import installed_version

    if shutil.which("nvcc") is None or installed_version() is None:
        return True
    return meta.get("nvcc_version") == nvcc_version()


def ir_structure(obj):
    """Every field of a tile-IR value, nested: the short reprs name buffers and vars only, so two kernels that
    differ in a buffer's dtype or shape (an fp16 and a bf16 GEMM) would share a key."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__, *(ir_structure(getattr(obj, f.name)) for f in dataclasses.fields(obj)))
    if isinstance(obj, (list, tuple)):
        return tuple(ir_structure(x) for x in obj)
    if isinstance(obj, dict):
        return tuple(sorted((repr(k), ir_structure(v)) for k, v in obj.items()))
    return repr(obj)


def ir_key(func, arch: str) -> str:
    """Cache key of a kernel instance before lowering: its tile IR (arguments bound, spans included), the
    arch, the compiler version and its CodegenOptions (pass configs, then the environment's overrides)."""
    return sha256("tilelsp-artifact", FORMAT, compiler_version(), repr(codegen_options(kernel_configs(func))), arch,
                  func.name,
                  repr(ir_structure(func.params)), repr(ir_structure(func.body)), func.out_idx,
                  repr(func.pass_configs), func.non_restrict)


def build_artifact(func, arch: str = DEFAULT_ARCH, cache: ArtifactCache | None | bool = None) -> Artifact:
    """Lower, compile and cache one kernel instance the checks accept (`cache=False` disables the disk cache)."""
    from ..lowering import refuse_errors

    arch = canonical(arch)
    store = None if cache is False else (cache if isinstance(cache, ArtifactCache) else ArtifactCache())
    key = ir_key(func, arch)
    if store is not None:  # only instances that passed the checks were stored: a hit needs no second look
        hit = store.get(key)
        if hit is not None and _builder_matches(hit[0]):
            meta, source, cubin = hit
            return _from_meta(meta, source, cubin)
    refuse_errors(func, arch)
    art = _build(func, arch)
    if store is not None:
        store.put(key, art.meta(), art.source, art.cubin)
    return art


def _from_meta(meta: dict, source: str, cubin: bytes) -> Artifact:
    fields = {k: meta[k] for k in Artifact.__dataclass_fields__ if k in meta and k not in ("source", "cubin")}
    return Artifact(source=source, cubin=cubin, **fields)


def _build(func, arch: str) -> Artifact:
    from ..codegen.cuda import generate
    from ..lowering import user_errors

    with user_errors(func, arch):
        ck = generate(func, arch)
    return from_kernel(ck, func, arch, compile_cubin(ck.source, arch))


def from_kernel(ck, func, arch: str, cubin: bytes) -> Artifact:
    """The Artifact of a lowered CudaKernel of `func` and its cubin."""
    version = nvcc_version()
    return Artifact(name=func.name, kernel_symbol=ck.kernel_symbol, arch=arch, source=ck.source, cubin=cubin,
                    grid=list(ck.grid), block=list(ck.block), smem_bytes=ck.smem_bytes, params=ck.params,
                    content_hash=sha256(ck.source, arch, version), nvcc_version=version,
                    instance=func.instance, line_map=[list(x) for x in ck.line_map],
                    launches=[dict(step, grid=list(step["grid"]), block=list(step["block"])) for step in ck.launches],
                    workspaces=ck.workspaces, tensor_maps=ck.tensor_maps, cooperative=ck.cooperative,
                    persistent=ck.persistent, cluster=ck.cluster)
