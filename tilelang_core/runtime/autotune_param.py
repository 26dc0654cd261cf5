"""The arguments and the result of an autotune search (TileLang's `tilelang.autotuner.param`): `CompileArgs`,
`ProfileArgs`, and `AutotuneResult`, which `save_to_disk` writes to a folder atomically.

A saved result is a folder: the best config, the pickled PrimFunc, the latencies, the kernel's device and host
source, its binary (the CPU backend's shared library, a cubin, or an NVRTC cubin with its Python launcher) and its
pickled parameters. Everything is written into a staging folder beside the destination first, which then replaces
the destination in one rename: a reader never sees a half-written result, an old folder's stray files do not
survive, and a failed save (a full disk, a kernel without device source) leaves no folder and no staging debris and
is logged (`logger.exception`), not raised, as a lost cache entry is no error of the search.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger("tilelang_core.autotune")

BEST_CONFIG_PATH = "best_config.json"
FUNCTION_PATH = "function.pkl"
LATENCY_PATH = "latency.json"
DEVICE_KERNEL_PATH = "device_kernel.cu"
HOST_KERNEL_PATH = "host_kernel.cu"
KERNEL_LIB_PATH = "kernel_lib.so"
KERNEL_CUBIN_PATH = "kernel.cubin"
KERNEL_PY_PATH = "kernel.py"
PARAMS_PATH = "params.pkl"


@dataclass
class CompileArgs:
    """How each config's kernel is compiled (`AutoTuner.set_compile_args`)."""

    out_idx: list | int | None = None
    target: str = "auto"
    execution_backend: str | None = None
    target_host: str | None = None
    verbose: bool = False
    pass_configs: dict | None = None

    def compile_kwargs(self) -> dict:
        """The keyword arguments of `tilelang.compile` these stand for."""
        return {"out_idx": self.out_idx, "target": self.target, "pass_configs": self.pass_configs}


@dataclass
class ProfileArgs:
    """How an autotuner feeds and checks each config's kernel (`AutoTuner.set_profile_args`)."""

    supply_type: object = None
    ref_prog: object = None
    supply_prog: object = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: object = None
    cache_input_tensors: bool = False


CALLBACKS = ("ref_prog", "supply_prog", "manual_check_prog")  # ProfileArgs fields holding user functions


@dataclass
class AutotuneResult:
    """The outcome of a search: best config, its latency (ms: its median over the final rounds) and kernel;
    `timings` has every config's first-pass figure (one comparable column), `final` the finalists' medians;
    failures as (config, error)."""

    latency: float | None = None
    config: dict | None = None
    ref_latency: float | None = None
    libcode: str | None = None
    func: object = None
    kernel: object = None
    timings: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    device: str = ""
    cached: bool = False
    trace: list = field(default_factory=list)  # a Ray search's tasks: {"task", "pid", "start", "loaded", "end"}
    tied: list = field(default_factory=list)  # configs the final round could not separate from the winner
    final: list = field(default_factory=list)  # the finalists' (config, median ms over the rounds, rounds)

    def save_to_disk(self, path, verbose: bool = False) -> None:
        """Write this result to the folder `path`, replacing what is there, atomically (see the module)."""
        path = Path(path)
        staging = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.staging-", dir=path.parent))
            (staging / BEST_CONFIG_PATH).write_text(json.dumps(self.config, default=str))
            (staging / FUNCTION_PATH).write_bytes(pickle.dumps(self.func))
            (staging / LATENCY_PATH).write_text(json.dumps({"latency": self.latency,
                                                            "ref_latency": self.ref_latency}))
            self._save_kernel_to_disk(staging)
            _replace_folder(staging, path)
            staging = None
            if verbose:
                logger.info("saved the autotune result to %s", path)
        except (OSError, ValueError, TypeError, AttributeError, pickle.PicklingError):
            logger.exception("Error during atomic autotune result save")
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)

    def _save_kernel_to_disk(self, folder: Path) -> None:
        """The kernel's part of a saved result: device and host source, binary, parameters."""
        kernel = self.kernel
        if kernel.kernel_source is None:
            raise ValueError(f"the kernel of {self.config} has no device source to save")
        (folder / DEVICE_KERNEL_PATH).write_text(kernel.kernel_source)
        (folder / HOST_KERNEL_PATH).write_text(kernel.adapter.get_host_source() or "")
        library = Path(kernel.adapter.libpath)
        if kernel.execution_backend == "nvrtc":  # a cubin and the Python launcher beside it
            shutil.copyfile(library, folder / KERNEL_CUBIN_PATH)
            shutil.copyfile(library.with_suffix(".py"), folder / KERNEL_PY_PATH)
        elif library.suffix == ".cubin":
            shutil.copyfile(library, folder / KERNEL_CUBIN_PATH)
        else:
            shutil.copyfile(library, folder / KERNEL_LIB_PATH)
        (folder / PARAMS_PATH).write_bytes(pickle.dumps(kernel.params))


def _replace_folder(staging: Path, path: Path) -> None:
    """Put the complete folder `staging` at `path`: an existing folder there is moved aside first (one rename) and
    removed after, so `path` is always either the old result, briefly absent, or the new one."""
    old = None
    if path.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
        os.rename(path, old / "entry")
    os.rename(staging, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
