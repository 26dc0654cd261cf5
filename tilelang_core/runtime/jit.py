"""The TileLang-compatible JIT: `compile(func, out_idx, target)`, `@jit` on kernel factories, `JITKernel`.

`target`: any spelling `target.parse_target` reads; "auto" is the GPU torch sees (else the CPU backend) and "cuda"
that GPU (else sm_90a). Kernels with errors raise CompileError.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import threading

from ..diagnostics import CompileError, DiagnosticSink
from ..ir import nodes as N
from ..options import codegen_options
from ..target import Target, from_capability, parse_target
from . import cpu_device
from .jit_binding import ArgumentBinder
from .jit_diagnostics import jit_phase
from .kernel import CallPlan, KernelParam, contiguous_args, kernel_params, normalize_out_idx



def machine_target(target) -> Target:
    """The Target of a JIT `target=` argument on this machine ("auto" and "cuda" ask torch for the device; under
    the stand-in GPU of cpu_device.route_kernels_to_cpu every valid target is the CPU backend)."""
    found = parse_target(target, device=device_target)
    return Target("cpu") if cpu_device.routes_kernels_to_cpu() else found


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

    def __init__(self, func: N.PrimFunc, out_idx=None, target="auto", pass_configs=None):
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


@contextlib.contextmanager
def paused_gc():
    """The cyclic garbage collector off while a kernel is parsed and built: after `import torch` each of its
    full collections walks torch's millions of objects, and they made up half of a cached kernel's load time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def compile(func, out_idx=None, target="auto", target_host=None, execution_backend=None,  # noqa: A001
            verbose=False, pass_configs=None, **kwargs) -> JITKernel:
    """Compile a @T.prim_func (or an IR PrimFunc) into a JITKernel for `target` (`pass_configs`: TileLang's; the
    CUDA backend honours those of options.PASS_CONFIGS and ignores the others)."""
    with paused_gc():
        return JITKernel(to_ir(func, out_idx), out_idx=out_idx, target=target, pass_configs=pass_configs)


def par_compile(funcs, out_idx=None, target="auto", pass_configs=None, num_workers=None, ignore_error=False,
                **kwargs) -> list:
    """`tilelang.par_compile`: compile several @T.prim_funcs (or IR PrimFuncs) into JITKernels, in order."""
    def build(func):
        return compile(func, out_idx=out_idx, target=target, pass_configs=pass_configs)

    return build_all(build, list(funcs), num_workers, ignore_error)


def build_all(build, items: list, num_workers=None, ignore_error: bool = False) -> list:
    """`build(item)` for each item, in order; forked workers (`num_workers`, else TILELSP_AUTOTUNE_JOBS) fill the
    artifact cache first. With `ignore_error` an item that fails gives None instead of raising."""
    from .autotune_search import default_jobs, precompile

    precompile(build, items, num_workers or default_jobs())
    kernels = []
    for item in items:
        try:
            kernels.append(build(item))
        except Exception:
            if not ignore_error:
                raise
            kernels.append(None)
    return kernels


def _instance_label(factory, args, kwargs) -> str:
    try:
        bound = inspect.signature(factory).bind(*args, **kwargs)
        bound.apply_defaults()
        items = [f"{k}={_short(v)}" for k, v in bound.arguments.items()]
    except (TypeError, ValueError):
        items = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    return f"{getattr(factory, '__name__', 'kernel')}({', '.join(items)})"


def _short(v) -> str:
    return str(v) if isinstance(v, str) else repr(v)


def _call_form(args, kwargs):
    """The call as written (positional values, keywords in order), hashable: the first-level cache key."""
    form = (args, tuple(kwargs.items()))
    try:
        hash(form)
    except TypeError as err:
        raise TypeError(f"the arguments of a @jit factory call must be hashable, as the kernel is cached by them "
                        f"({err}); pass tuples instead of lists") from None
    return form


class JITFactory:
    """`@jit` on a kernel factory: calling it builds (once per argument set) and returns a JITKernel.

    Two caches, as in TileLang: the call as written -> its canonical key (`func.parse_args`: defaults applied, one
    key for every call form), and the canonical key -> the kernel (one table per set of codegen options, so an
    override flipped in this process builds anew)."""

    def __init__(self, factory, out_idx=None, target="auto", **options):
        functools.update_wrapper(self, factory)
        # not a function wrapper, as TileLang's JITImpl is not: pytest must not collect a module-level
        # `@tilelang.jit def test_x(A: T.Tensor(...))` as a test (it follows __wrapped__); inspect.signature still
        # gives the factory's parameters
        del self.__wrapped__
        self.__signature__ = inspect.signature(factory)
        self.factory = factory
        self.func = ArgumentBinder(factory, "lazy")
        self.mode = "lazy"
        self.out_idx = out_idx
        self.target = target
        self.pass_configs = options.get("pass_configs")
        self._kernel_caches: dict = {}
        self._call_form_cache: dict = {}
        self._lock = threading.Lock()

    @property
    def _kernel_cache(self) -> dict:
        """Canonical key -> kernel, for the codegen options in force now."""
        return self._kernel_caches.setdefault(codegen_options(), {})

    def __call__(self, *args, **kwargs) -> JITKernel:
        """Instantiate the factory with these arguments and compile the kernel it returns (cached)."""
        form = _call_form(args, kwargs)
        with self._lock:
            key = self._call_form_cache.get(form)
        if key is None:
            key, _ = self.func.parse_args(*args, **kwargs)
        with self._lock:
            self._call_form_cache[form] = key
            if key in self._kernel_cache:
                return self._kernel_cache[key]
        with paused_gc():
            result = self.factory(*args, **kwargs)
            label = _instance_label(self.factory, args, kwargs)
            ir_func = to_ir(result, self.out_idx, instance=label, factory=getattr(self.factory, "__name__", None))
            kernel = JITKernel(ir_func, out_idx=self.out_idx, target=self.target, pass_configs=self.pass_configs)
        with self._lock:
            self._kernel_cache[key] = kernel
        return kernel

    def compile(self, *args, **kwargs) -> JITKernel:
        """The JITKernel for these factory arguments (TileLang's `factory.compile(...)`; same as calling)."""
        return self(*args, **kwargs)

    def par_compile(self, configs, num_workers=None, ignore_error: bool = False) -> list:
        """The JITKernels for several argument sets (each a tuple of positional or a dict of keyword arguments),
        in order (see `build_all`)."""
        def build(config):
            return self(**config) if isinstance(config, dict) else self(*config)

        return build_all(build, list(configs), num_workers, ignore_error)

    def get_kernel_source(self, *args, **kwargs) -> str:
        """The generated source of the kernel for these factory arguments."""
        return self(*args, **kwargs).get_kernel_source()

    def get_tir(self, *args, **kwargs):
        """The IR PrimFunc for these factory arguments (no build)."""
        return to_ir(self.factory(*args, **kwargs), self.out_idx)


def jit(func=None, *, out_idx=None, target="auto", **options):
    """Decorator: `@jit`, `@jit(out_idx=[-1])`, `@jit(target="cpu")` on a kernel factory (or a prim_func);
    an eager-style function (its own body opens `T.Kernel`) becomes an EagerKernel."""
    from ..language.types import PrimFuncDef

    def wrap(f):
        if isinstance(f, (PrimFuncDef, N.PrimFunc)):
            return compile(f, out_idx=out_idx, target=target, pass_configs=options.get("pass_configs"))
        from .eager import EagerKernel, is_eager

        if is_eager(f):
            return EagerKernel(f, target=target, pass_configs=options.get("pass_configs"))
        return JITFactory(f, out_idx=out_idx, target=target, **options)

    return wrap if func is None else wrap(func)

