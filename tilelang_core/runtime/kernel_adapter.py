"""`kernel.adapter` of a JITKernel (TileLang's name): where the built kernel lives and its entry points.

TileLang's adapters wrap a compiled library per execution backend; here a kernel is the CPU backend's shared
library (loaded with ctypes) or a CUDA artifact (a cubin launched through the driver API from Python, so there is
no host source). Each JITKernel has its own adapter, and its `kernels` are that kernel's entry points only.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False)
class KernelAdapter:
    """A built kernel's binary (`libpath`: None when it is not on disk), its entry points by symbol and its
    device source."""

    libpath: str | None
    kernels: dict
    kernel_source: str
    execution_backend: str

    def get_kernel_source(self, kernel_only: bool = True) -> str:
        """The device source (LLVM IR on the CPU backend, CUDA C otherwise)."""
        return self.kernel_source

    def get_host_source(self) -> str:
        """The host-side launcher's source: none, as kernels are launched from Python (`runtime.launch`)."""
        return ""


def cpu_adapter(func, module) -> KernelAdapter:
    """The adapter of a CPU-backend kernel (`module`: its cpu_artifact.CpuKernel)."""
    path = module.library.path if module.library is not None else None
    return KernelAdapter(path, {func.name: module}, module.llvm_ir, "ctypes")


def cuda_adapter(func, artifact, arch: str) -> KernelAdapter:
    """The adapter of a CUDA kernel: its artifact's cubin in the artifact cache, one entry per launch."""
    from .artifact import ir_key
    from .cache import ArtifactCache

    path = ArtifactCache().binary_path(ir_key(func, arch))
    symbols = [launch["kernel_symbol"] for launch in artifact.launches] or [artifact.kernel_symbol]
    return KernelAdapter(str(path) if path.exists() else None, {s: artifact for s in symbols}, artifact.source,
                         "cubin")
