"""CPU-backend kernels cached on disk as shared libraries: found by key and loaded through ctypes without tvm.

The key is the artifact key (`ir_key`) for the arch "cpu:<LLVM host target>". On a miss the kernel passes the
checks, is built with tvm's LLVM, exported with `export_library` (needs a C compiler) and stored as <key>.so
with its LLVM IR (<key>.ll); every later process loads the .so with `CpuLibrary` and never imports tvm. Without
a C compiler, a writable cache or a library loadable without tvm, the kernel runs through tvm as before.
"""
from __future__ import annotations

import ctypes
import functools
import platform
import tempfile
from pathlib import Path

from ..ir import nodes as N
from .artifact import FORMAT, ir_key
from .cache import ArtifactCache, sha256
from .cpu_library import CpuLibrary, CpuLibraryError
from .kernel_time import kernel_range


@functools.lru_cache(maxsize=1)
def cpu_arch() -> str:
    """The arch part of a CPU key: what the LLVM host target is chosen from (`codegen.cpu.host_target` reads the
    machine and the CPU's feature flags; its own code is in the compiler version). Computed without importing the
    CPU backend, which a cache hit never needs."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            flags = next((ln.split(":", 1)[1] for ln in fh if ln.startswith("flags")), "")
    except OSError:
        pass
    return f"cpu:{platform.machine()}:{sha256(' '.join(sorted(flags.split())))[:16]}"


def cpu_cache(root=None) -> ArtifactCache:
    """The artifact cache holding CPU libraries (.ll source, .so binary)."""
    return ArtifactCache(root, source_suffix=".ll", binary_suffix=".so")


def cpu_key(func: N.PrimFunc) -> str:
    """The cache key of a CPU kernel instance."""
    return ir_key(func, cpu_arch())


class CpuKernel:
    """A kernel built for the CPU: a cached shared library (ctypes) or, failing that, the tvm module."""

    def __init__(self, func: N.PrimFunc, library: CpuLibrary | None, llvm_ir: str | None, module=None):
        self.func = func
        self.library = library
        self.module = module
        self._llvm_ir = llvm_ir
        self._floats = [k for k, p in enumerate(func.params)
                        if isinstance(p, N.Var) and p.dtype.startswith(("float", "bfloat"))]
        self._pointers = [k for k, p in enumerate(func.params) if isinstance(p, N.Var) and p.dtype == "handle"]

    def __call__(self, *args) -> None:
        """Run in place on torch CPU tensors and scalars in parameter order."""
        if self._pointers:  # T.ptr arguments (addresses as ints) go as pointers, which TVM's signature checks
            args = [ctypes.c_void_p(a) if k in self._pointers else a for k, a in enumerate(args)]
        if self.library is not None and self._floats:
            args = [float(a) if k in self._floats else a for k, a in enumerate(args)]
        with kernel_range(self.func.name):  # the stand-in GPU's kernel, for a profiler (runtime/kernel_time.py)
            (self.module if self.library is None else self.library)(*args)

    @property
    def llvm_ir(self) -> str:
        """The LLVM IR text of the built library."""
        return self._llvm_ir if self._llvm_ir is not None else self.tvm_module().llvm_ir

    @property
    def tir_text(self) -> str:
        """The TIR (TVMScript) the library was built from (lowers again on a cache hit: needs tvm)."""
        return self.tvm_module().tir_text

    def tvm_module(self):
        """The tvm-built CpuModule (built now when the kernel came from the cache)."""
        if self.module is None:
            from ..codegen import cpu
            from ..lowering import user_errors

            with user_errors(self.func, "cpu"):
                self.module = cpu.build(self.func)
        return self.module


def load_cpu_kernel(func: N.PrimFunc, cache: ArtifactCache | None | bool = None) -> CpuKernel:
    """The CPU kernel of `func`: from the cache without tvm, else checked, built, exported and cached."""
    store = None if cache is False else (cache if isinstance(cache, ArtifactCache) else cpu_cache())
    key = cpu_key(func)
    if store is not None:
        hit = store.get(key)
        if hit is not None:
            try:
                return CpuKernel(func, CpuLibrary(store.binary_path(key), func.name), hit[1])
            except CpuLibraryError:
                store.remove(key)
    return _build(func, store, key)


def _build(func: N.PrimFunc, store: ArtifactCache | None, key: str) -> CpuKernel:
    from ..codegen import cpu
    from ..lowering import refuse_errors, user_errors

    refuse_errors(func, "cpu")
    with user_errors(func, "cpu"):
        module = cpu.build(func)
    if store is None:
        return CpuKernel(func, None, None, module)
    llvm_ir = module.llvm_ir
    library = _export(module)
    if library is None:
        return CpuKernel(func, None, llvm_ir, module)
    arch = cpu_arch()
    meta = {"name": func.name, "arch": arch, "instance": func.instance, "format": FORMAT, "nvcc_version": "",
            "content_hash": sha256(llvm_ir, arch, "")}
    try:
        store.put(key, meta, llvm_ir, library)
        return CpuKernel(func, CpuLibrary(store.binary_path(key), func.name), llvm_ir, module)
    except (OSError, CpuLibraryError):  # a read-only cache or a library that needs tvm's module: run through tvm
        return CpuKernel(func, None, llvm_ir, module)


def _export(module) -> bytes | None:
    """The module's shared library bytes (None when it cannot be linked, e.g. no C compiler)."""
    with tempfile.TemporaryDirectory(prefix="tilelsp-cpu-") as tmp:
        path = Path(tmp) / "kernel.so"
        try:
            module.executable.export_library(str(path))
            return path.read_bytes()
        except Exception:  # noqa: BLE001 -- tvm raises its own errors (a missing compiler): fall back to tvm
            return None
