"""`tilelang.engine` and `tilelang.engine.callback`: `lower`, and the CUDA/HIP source post-processing hooks,
which tilelang_core does not support (its CUDA source comes from its own pipeline)."""
from __future__ import annotations

from . import UnsupportedFeatureError

__all__ = ["lower", "register_cuda_postproc", "register_cuda_postproc_callback", "register_hip_postproc",
           "register_hip_postproc_callback", "register_c_postproc"]


def lower(*args, **kwargs):
    """`tilelang.lower`: tilelang_core's lowering pipeline (`tilelang_core.lower`)."""
    from ..lowering import lower as _lower

    return _lower(*args, **kwargs)


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
