"""The TileLang-compatible JIT: `compile(func, out_idx, target)`, `@jit` on kernel factories (a `JITFactory`, or an
`EagerKernel` for an eager-style function), `par_compile`; each gives JITKernels (runtime.jit_kernel).

`target`: any spelling `target.parse_target` reads; "auto" is the target of an enclosing `with tvm.target.Target(...)`
when there is one (as TileLang), else the GPU torch sees (else the CPU backend), and "cuda" that GPU (else sm_90a).
Kernels with errors raise CompileError.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import threading

from ..ir import nodes as N
from ..options import codegen_options
from .autotune_search import build_all
from .eager import EagerKernel, is_eager
from .jit_binding import ArgumentBinder
from .jit_kernel import JITKernel, to_ir


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
        in order (see `autotune_search.build_all`)."""
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
        if is_eager(f):
            return EagerKernel(f, target=target, pass_configs=options.get("pass_configs"))
        return JITFactory(f, out_idx=out_idx, target=target, **options)

    return wrap if func is None else wrap(func)

