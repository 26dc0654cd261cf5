"""JITKernel, one compiled kernel called with torch tensors (a CUDA artifact launched through the driver, or the CPU
backend's shared library); `to_ir`, the IR PrimFunc of what `@T.prim_func` returned; and `machine_target`, the
Target a JIT `target=` argument means on this machine.
"""
from __future__ import annotations

import functools
import sys

from ..diagnostics import CompileError, DiagnosticSink
from ..ir import nodes as N
from ..options import warn_deprecated_configs
from ..target import Target, from_capability, parse_target
from . import cpu_device
from .jit_diagnostics import jit_phase
from .kernel import CallPlan, KernelParam, contiguous_args, kernel_params, normalize_out_idx


def machine_target(target) -> Target:
    """The Target of a JIT `target=` argument on this machine ("auto": an enclosing tvm Target block's, else, like
    "cuda", the device torch sees; under
    the stand-in GPU of cpu_device.route_kernels_to_cpu every valid target is the CPU backend)."""
    if target in (None, "auto"):
        target = scoped_target() or target
    found = parse_target(target, device=device_target)
    return Target("cpu") if cpu_device.routes_kernels_to_cpu() else found


def scoped_target():
    """The tvm Target of an enclosing `with tvm.target.Target(...)` block, or None (tvm is not imported for it: a
    program that made such a block has imported it)."""
    tvm = sys.modules.get("tvm")
    if tvm is None:
        return None
    try:
        return tvm.target.Target.current(allow_none=True)
    except Exception:  # noqa: BLE001 -- a partly imported tvm, no usable scope: fall back to the device
        return None


def device_target() -> Target:
    """The target of the GPU torch sees (sm_90a for compute capability 9.0), or the CPU backend without one."""
    try:
        import torch
    except ImportError:
        return Target("cpu")
    if not torch.cuda.is_available():
        return Target("cpu")
    return from_capability(*torch.cuda.get_device_capability())


class _CpuBackend:
    def __init__(self, func: N.PrimFunc):
        from .cpu_artifact import load_cpu_kernel

        self.module = load_cpu_kernel(func)  # a cache hit loads the shared library without tvm
        self.device = "cpu"

    def run(self, args):
        self.module(*args)

    def source(self) -> str:
        return self.module.llvm_ir


class _CudaBackend:
    def __init__(self, func: N.PrimFunc, arch: str):
        from .artifact import build_artifact

        self.artifact = build_artifact(func, arch)
        self.device = "cuda"

    def run(self, args):
        from .launch import launch

        launch(self.artifact, args)

    def source(self) -> str:
        return self.artifact.source


class JITKernel:
    """A compiled kernel: call it with torch tensors (outputs for out_idx are allocated and returned)."""

    latency: float | None = None  # on the kernel an autotuner picked: its time (ms) and config
    config: dict | None = None
    ref_latency: float | None = None

    def __init__(self, func: N.PrimFunc = None, out_idx=None, target="auto", pass_configs=None,
                 from_database: bool = False):
        warn_deprecated_configs(pass_configs)
        if from_database:  # TileLang's kernel database builds an empty kernel and fills it in afterwards
            from ..compat import UnsupportedFeatureError

            raise UnsupportedFeatureError("JITKernel(from_database=True)", "tilelang_core's JIT finds a kernel it "
                                          "built before by its key when it compiles it (runtime/cache.py): call "
                                          "tilelang.compile(func, ...)")
        if func is None:
            raise TypeError("JITKernel needs the kernel to compile: JITKernel(func, out_idx=None, target='auto', "
                            "pass_configs=None)")
        if not isinstance(func, N.PrimFunc):
            func = to_ir(func, out_idx)
        if out_idx is None and func.out_idx is not None:
            out_idx = func.out_idx
        if pass_configs:  # those the CUDA lowering honours: options.PASS_CONFIGS (docs/options.md)
            func = func.with_pass_configs(pass_configs)
        self.func = func
        self.out_idx = normalize_out_idx(out_idx, len(func.params))
        found = machine_target(target)
        self.target, self.arch = found.kind, found.arch_name or None
        # each backend passes the gate first (refuse_errors: the CPU one here, build_artifact for CUDA)
        with jit_phase("build", kernel=func.name, target=self.arch or self.target):
            self._backend = _CpuBackend(func) if self.target == "cpu" else _CudaBackend(func, self.arch)
        self.params: list[KernelParam] = kernel_params(func, self.out_idx)
        self._plan = CallPlan(func, self.out_idx)
        self._lowered: dict = {}

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.func.name

    @functools.cached_property
    def adapter(self):
        """TileLang's `kernel.adapter`: this kernel's binary, entry points and source (runtime.kernel_adapter)."""
        from .kernel_adapter import cpu_adapter, cuda_adapter

        if self.target == "cpu":
            return cpu_adapter(self.func, self._backend.module)
        return cuda_adapter(self.func, self._backend.artifact, self.arch)

    @property
    def kernel_source(self) -> str:
        """TileLang's `kernel.kernel_source`: the generated device source (`get_kernel_source()`)."""
        return self.get_kernel_source()

    @property
    def execution_backend(self) -> str:
        """How the kernel runs: "ctypes" (the CPU backend's shared library) or "cubin" (CUDA, driver API)."""
        return self.adapter.execution_backend

    @property
    def pass_configs(self) -> dict:
        """TileLang's `kernel.pass_configs`: the configs this kernel was built with."""
        return dict(self.func.pass_configs)

    def __call__(self, *args):
        """Run on tensors (inputs only, or every parameter); returns the output(s) for out_idx."""
        full = self._plan.prepare(args, self._backend.device)
        run_args, writeback = contiguous_args(full)
        self._backend.run(self._plan.storage_views(run_args))
        for orig, copy in writeback:
            orig.copy_(copy)
        outs = [full[k] for k in self.out_idx]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else outs

    def get_kernel_source(self, kernel_only: bool = True) -> str:
        """The generated source: CUDA C for GPU targets, LLVM IR for the CPU. TileLang's `kernel_only=False` adds
        its host wrapper; tilelang_core launches from Python (runtime.launch), so the source is the same."""
        return self._backend.source()

    @property
    def prim_func(self) -> N.PrimFunc:
        """The kernel's tile-IR PrimFunc."""
        return self.func

    def show_source(self, which: str = "kernel") -> None:
        """Print the generated source (CUDA C or LLVM IR)."""
        print(self.get_kernel_source())

    def get_ir(self, stage: str = "tir") -> str:
        """The printed IR of a pipeline stage (e.g. parsed, tir, llvm, cuda)."""
        if self.target == "cpu" and stage == "tir":
            return self._backend.module.tir_text
        if self.target == "cpu" and stage == "llvm":
            return self._backend.module.llvm_ir
        if stage not in self._lowered:
            from ..lowering import lower

            result = lower(self.func, target=self.arch or "cpu", until=stage)
            if stage not in result.stages:
                raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(result.stages)}")
            self._lowered[stage] = result.stages[stage]
        return self._lowered[stage]

    def get_profiler(self, tensor_supply_type=None):
        """A Profiler for this kernel (random inputs, assert_allclose, do_bench)."""
        from .profiler import Profiler

        return Profiler(self, tensor_supply_type=tensor_supply_type)

    def run_once(self, func=None):
        """`func` (default: this kernel) called once on the profiler's generated inputs, as TileLang's
        `JITKernel.run_once`; its result."""
        return self.get_profiler().run_once(func)

    def __repr__(self) -> str:
        return f"JITKernel({self.func.name}, target={self.arch or self.target}, out_idx={list(self.out_idx)})"


def to_ir(func, out_idx=None, instance: str = "", factory: str | None = None) -> N.PrimFunc:
    """An IR PrimFunc from what `@T.prim_func` returned at run time (CompileError on errors)."""
    from ..language.types import PrimFuncDef

    if isinstance(func, N.PrimFunc):
        return func
    if not isinstance(func, PrimFuncDef):
        raise TypeError(f"expected a @T.prim_func kernel, got {type(func).__name__}; a @jit factory must "
                        "return the @T.prim_func it defines")
    from ..frontend import parse_captured

    sink = DiagnosticSink()
    with jit_phase("parse", kernel=instance or func.name):
        ir_func = parse_captured(func.captured, sink, out_idx=out_idx, factory=factory, instance=instance)
    errors = [d for d in sink.items if d.is_error]
    if errors or ir_func is None:
        raise CompileError(errors or sink.items, func.captured.filename)
    return ir_func
