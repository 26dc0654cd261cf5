"""The only door to apache-tvm: a lazy, version-checked import and the 0.27 names we rely on.

Nothing on the check path may import this module's `load()` result; call `load()` inside the function that
needs tvm, never at module import time.
"""
from __future__ import annotations

import contextlib
import functools
import threading
from types import SimpleNamespace

REQUIRED_VERSION = "0.27.0.post1"

_LOCK = threading.Lock()
_CACHE: dict[str, SimpleNamespace] = {}


class TvmUnavailable(ImportError):
    """Raised when apache-tvm is missing or is not the pinned version."""


@functools.lru_cache(maxsize=1)
def installed_version() -> str | None:
    """The installed apache-tvm distribution version, or None when it is absent (read once per process: each
    cached kernel's lookup asks)."""
    from importlib import metadata

    try:
        return metadata.version("apache-tvm")
    except metadata.PackageNotFoundError:
        return None


def _check_version(module_version: str | None) -> None:
    """Raise TvmUnavailable unless the pinned version is installed."""
    version = installed_version() or module_version
    if version is None:
        raise TvmUnavailable(
            "apache-tvm is not installed; the CPU/CUDA backends need it: "
            f"pip install 'apache-tvm=={REQUIRED_VERSION}'"
        )
    if version != REQUIRED_VERSION:
        raise TvmUnavailable(
            f"apache-tvm {version} is installed but tilelang_core needs exactly {REQUIRED_VERSION} "
            f"(its IR API changes between releases): pip install 'apache-tvm=={REQUIRED_VERSION}'"
        )


def available() -> bool:
    """True when the pinned apache-tvm can be imported (does not import it)."""
    try:
        _check_version(None)
    except TvmUnavailable:
        return False
    return True


def load() -> SimpleNamespace:
    """Import tvm once and return a namespace: tvm, tirx, ir, ffi (tvm_ffi), script_tirx, version."""
    with _LOCK:
        if "ns" in _CACHE:
            return _CACHE["ns"]
        _check_version(None)
        try:
            import tvm
            import tvm_ffi
            from tvm import ir, tirx
        except ImportError as exc:  # broken install
            raise TvmUnavailable(f"importing apache-tvm failed: {exc}") from exc
        ns = SimpleNamespace(tvm=tvm, tirx=tirx, ir=ir, ffi=tvm_ffi, version=tvm.__version__)
        _CACHE["ns"] = ns
        return ns


def tvm():
    """The `tvm` module (imported on first use)."""
    return load().tvm


def tirx():
    """The `tvm.tirx` module (0.27's name for tvm.tir)."""
    return load().tirx


def script_tirx():
    """TVMScript's `T` namespace for tirx (`tvm.script.tirx`)."""
    from tvm.script import tirx as T  # noqa: N812

    load()
    return T


def compile_module(funcs: dict, target) -> object:
    """`tvm.compile` an IRModule built from {name: tirx.PrimFunc} for `target` (str or dict)."""
    ns = load()
    if isinstance(target, dict):
        target = ns.tvm.target.Target(target)
    return ns.tvm.compile(ns.tvm.IRModule(funcs), target=target)


@contextlib.contextmanager
def cuda_source_only():
    """Within: TVM's CUDA build keeps the source and compiles nothing (we compile the finished text with nvcc).

    Where a GPU driver is loaded TVM compiles each CUDA module through `tvm_callback_cuda_compile`, by default with
    NVRTC when cuda-bindings is installed; that compile of TVM's unfinished text fails (it lacks our headers) and
    costs seconds. The callback is swapped for one that hands the source back, and restored after.
    """
    ns = load()
    name = "tvm_callback_cuda_compile"
    previous = ns.ffi.get_global_func(name, allow_missing=True)
    ns.ffi.register_global_func(name, lambda code, *rest: code.encode(), override=True)
    try:
        yield
    finally:
        if previous is not None:
            ns.ffi.register_global_func(name, previous, override=True)
