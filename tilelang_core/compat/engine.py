"""`tilelang.engine` and `tilelang.engine.callback`: `lower`, and the CUDA/HIP source post-processing hooks,
which tilelang_core does not support (its CUDA source comes from its own pipeline)."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from . import UnsupportedFeatureError

__all__ = ["LoweredArtifact", "lower", "register_cuda_postproc", "register_cuda_postproc_callback", "register_hip_postproc",
           "register_hip_postproc_callback", "register_c_postproc"]


@dataclass
class LoweredArtifact:
    """What `tilelang.lower` returns: the generated source (`kernel_source`: CUDA C, or LLVM IR for the CPU), the
    kernel's parameters (tile-IR Buffers and Vars), its launch (CUDA) and every pipeline stage's text."""

    target: str
    kernel_source: str
    params: list
    launch: dict | None
    stages: dict

    @property
    def host_mod(self):
        """TileLang's TVM host module: raises UnsupportedFeatureError (tilelang_core builds no host module)."""
        raise UnsupportedFeatureError("LoweredArtifact.host_mod (the TVM host module and its attributes, e.g. "
                                      "tma_descriptor_args)", "tilelang_core launches kernels from its own runtime; "
                                      "the launch is in `.launch`, every pipeline stage's text in `.stages`")


def lower(func, target=None, target_host=None, runtime_only=False, enable_host_codegen=False,
          enable_device_compile=False):
    """`tilelang.lower`: a @T.prim_func (or a kernel's IR) through tilelang_core's pipeline for `target` (a
    name, a dict, a `tvm.target.Target`; by default the `with tvm.target.Target(...)` in force, else the device
    the JIT would pick). TileLang's host/device switches are accepted; the whole pipeline always runs."""
    from ..lowering import lower as run_pipeline
    from ..runtime.jit import to_ir

    kernel = to_ir(func)
    result = run_pipeline(kernel, target=_pipeline_target(target))
    return LoweredArtifact(result.target, result.source, list(kernel.params), result.launch, dict(result.stages))


def _pipeline_target(target):
    """The pipeline's target for what `tilelang.lower` was given (see `lower`)."""
    if target is None or target == "auto":
        target = _current_tvm_target()
    if target is None:
        from ..runtime.jit_kernel import machine_target

        return machine_target("auto")
    return target  # every spelling, tvm.target.Target included, is read by target.parse_target


def _current_tvm_target():
    """The `tvm.target.Target` of an enclosing `with` block, or None (tvm is not imported for this)."""
    tvm = sys.modules.get("tvm")
    target_mod = getattr(tvm, "target", None)
    current = getattr(getattr(target_mod, "Target", None), "current", None)
    return current(allow_none=True) if current is not None else None


def _postproc(name: str):
    def register(*args, **kwargs):
        raise UnsupportedFeatureError(f"tilelang.engine.{name} (editing the generated source)",
                                      "tilelang_core emits the kernel source from its own pipeline")

    register.__name__ = name
    register.__doc__ = f"`tilelang.engine.{name}`: raises UnsupportedFeatureError."
    return register


register_cuda_postproc = _postproc("register_cuda_postproc")
register_cuda_postproc_callback = _postproc("register_cuda_postproc_callback")
register_hip_postproc = _postproc("register_hip_postproc")
register_hip_postproc_callback = _postproc("register_hip_postproc_callback")
register_c_postproc = _postproc("register_c_postproc")
