"""The CUDA backend: tile IR to thread-level TVMScript, a TVM PrimFunc, and CUDA C for sm_80…sm_90a."""
from .generate import CudaKernel, generate, plan, target_of, threads_of, tvmscript, warp_specialization

__all__ = ["CudaKernel", "generate", "plan", "target_of", "threads_of", "tvmscript", "warp_specialization"]
