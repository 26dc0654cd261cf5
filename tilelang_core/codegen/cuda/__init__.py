"""The CUDA backend: tile IR to thread-level TVMScript, a TVM PrimFunc, and CUDA C for sm_80…sm_90a."""
from .generate import CudaKernel, generate, target_of, tvmscript
from .kernel_plan import KernelPlan, plan, plan_kernel, threads_of
from .source_kernel import source_launch

__all__ = ["CudaKernel", "KernelPlan", "generate", "plan", "plan_kernel", "source_launch", "target_of", "threads_of",
           "tvmscript"]
