"""A stand-in CUDA device for running TileLang files written for a GPU on a machine without one.

`install()` makes torch's CUDA device queries answer as one H100-class sm_90 GPU and makes every tensor
that the file asks to put on "cuda" live on the CPU (factory `device=` arguments, `.cuda()`, `.to("cuda")`);
fp16 GEMMs the file runs in torch compute in float32, as CUDA's accumulate. `route_kernels_to_cpu()` makes every
kernel build, whatever target it names, use the CPU backend. Used by `python -m tilelang_core.run` (no GPU, or
`--device cpu`), the corpus harness and the peer-test harness; nothing is launched on a GPU.
"""
from __future__ import annotations

import contextlib
import time
import types

_ROUTED = False  # route_kernels_to_cpu() is in force
SM_COUNT = 132
DEVICE_NAME = "NVIDIA H100 80GB HBM3"
TOTAL_MEMORY = 80 * 1024**3


def _is_cuda_device(dev) -> bool:
    if isinstance(dev, int) and not isinstance(dev, bool):
        return True  # torch reads a bare int as a CUDA ordinal
    text = str(dev) if dev is not None else ""
    return text == "cuda" or text.startswith("cuda:")


def _cpu_if_cuda(dev):
    return "cpu" if _is_cuda_device(dev) else dev


class _Event:
    """torch.cuda.Event on the host clock."""

    def __init__(self, *args, **kwargs):
        self.t = None

    def record(self, *args, **kwargs):
        self.t = time.perf_counter()

    def synchronize(self):
        return None

    def wait(self, *args, **kwargs):
        return None

    def query(self):
        return True

    def elapsed_time(self, end) -> float:
        return ((end.t or 0.0) - (self.t or 0.0)) * 1e3


class _Stream:
    """torch.cuda.Stream that runs everything on the host, in order."""

    cuda_stream = 0
    device = "cuda:0"

    def __init__(self, *args, **kwargs):
        pass

    def synchronize(self):
        return None

    def wait_stream(self, *args):
        return None

    def wait_event(self, *args):
        return None

    def record_event(self, event=None):
        event = event or _Event()
        event.record()
        return event

    def query(self):
        return True


def _properties(device=None):
    return types.SimpleNamespace(
        name=DEVICE_NAME, major=9, minor=0, total_memory=TOTAL_MEMORY, multi_processor_count=SM_COUNT,
        max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32,
        regs_per_multiprocessor=65536, shared_memory_per_block=48 * 1024,
        shared_memory_per_block_optin=232448, shared_memory_per_multiprocessor=233472,
        L2_cache_size=50 * 1024**2, is_integrated=False, is_multi_gpu_board=False, uuid="shim", gcnArchName="")


def _patch_cuda_module(torch) -> None:
    cuda = torch.cuda
    answers = {
        "is_available": lambda: True, "is_initialized": lambda: True, "init": lambda: None,
        "device_count": lambda: 1, "current_device": lambda: 0, "set_device": lambda *a, **k: None,
        "get_device_capability": lambda *a, **k: (9, 0), "get_device_name": lambda *a, **k: DEVICE_NAME,
        "get_device_properties": _properties, "get_arch_list": lambda: ["sm_90"],
        "synchronize": lambda *a, **k: None, "empty_cache": lambda: None,
        "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None,  # torch.manual_seed seeds the CPU
        "seed": lambda: None, "seed_all": lambda: None,
        "mem_get_info": lambda *a, **k: (TOTAL_MEMORY, TOTAL_MEMORY),
        "memory_allocated": lambda *a, **k: 0, "max_memory_allocated": lambda *a, **k: 0,
        "memory_reserved": lambda *a, **k: 0, "max_memory_reserved": lambda *a, **k: 0,
        "reset_peak_memory_stats": lambda *a, **k: None, "is_bf16_supported": lambda *a, **k: True,
        "Event": _Event, "Stream": _Stream, "current_stream": lambda *a, **k: _Stream(),
        "default_stream": lambda *a, **k: _Stream(), "stream": lambda *a, **k: contextlib.nullcontext(),
        "device": lambda *a, **k: contextlib.nullcontext(), "_lazy_init": lambda: None,
    }
    for name, value in answers.items():
        setattr(cuda, name, value)


def _patch_generator(torch) -> None:
    class CpuGenerator(torch.Generator):
        """torch.Generator(device="cuda") made on the CPU (still a torch.Generator for isinstance and typing)."""

        def __new__(cls, device="cpu"):
            return torch._C.Generator.__new__(cls, device=_cpu_if_cuda(device))

        def __init__(self, device="cpu"):
            pass

    torch.Generator = CpuGenerator


def _function_mode(torch):
    from torch.overrides import TorchFunctionMode

    tensor_cuda = torch.Tensor.cuda
    tensor_to = torch.Tensor.to
    is_cuda_attr = torch.Tensor.is_cuda
    # fp16 GEMMs: CUDA accumulates the products in float32 and so do these, computed in float32 (torch's float16
    # GEMM on the CPU runs ~5x slower than float32: fusedmoe's torch reference alone ran past the timeout)
    half_gemms = {torch.nn.functional.linear, torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__,
                  torch.mm, torch.Tensor.mm, torch.bmm, torch.Tensor.bmm, torch.addmm, torch.einsum}
    half = torch.float16

    class CudaToCpu(TorchFunctionMode):
        """Rewrites CUDA placements to the CPU for every torch call the file makes."""

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is tensor_cuda:
                return args[0]
            if getattr(func, "__self__", None) is is_cuda_attr:
                return True
            if "device" in kwargs:
                kwargs["device"] = _cpu_if_cuda(kwargs["device"])
            if func is tensor_to:
                args = tuple(_cpu_if_cuda(a) if i and not hasattr(a, "dtype") else a
                             for i, a in enumerate(args))
            if func in half_gemms and "out" not in kwargs and any(
                    isinstance(a, torch.Tensor) and a.dtype == half for a in args):
                args = tuple(a.float() if isinstance(a, torch.Tensor) and a.dtype == half else a for a in args)
                return func(*args, **kwargs).to(half)
            return func(*args, **kwargs)

    return CudaToCpu()


_installed = False


def install() -> None:
    """Make this process look like it has one sm_90 GPU whose tensors live on the CPU (idempotent)."""
    global _installed
    if _installed:
        return
    import torch

    _patch_cuda_module(torch)
    _patch_generator(torch)
    mode = _function_mode(torch)
    mode.__enter__()  # stays active for the rest of the process
    _installed = True


def installed() -> bool:
    """Whether `install()` has run in this process."""
    return _installed


def route_kernels_to_cpu(on: bool = True) -> None:
    """Build every kernel for the CPU backend, whatever target the file names ("cuda", "sm_90a", "auto");
    `jit_kernel.machine_target` asks `routes_kernels_to_cpu()` (a misspelt target still fails with its own message)."""
    global _ROUTED
    _ROUTED = on


def routes_kernels_to_cpu() -> bool:
    """Whether `route_kernels_to_cpu()` is in force in this process."""
    return _ROUTED
