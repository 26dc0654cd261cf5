"""Eager-style `@tilelang.jit` kernels: tensors declared in the body (`A: T.Tensor((M, K), dtype)`), dims from
`T.const("M, K")`, outputs from `T.empty(...)`, `return C`. A call specialises on shapes and scalar arguments.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import threading

from ..diagnostics import CompileError, DiagnosticSink
from ..frontend.known import LAUNCH_BUILTINS
from ..ir import nodes as N
from ..language.types import TensorType
from ..language.packing import logical_shape
from .autotune_search import build_all
from .jit_binding import ArgumentBinder
from .jit_kernel import JITKernel


def is_eager(func) -> bool:
    """True when `func`'s own body (not a nested def) opens `with T.Kernel(...)` or `T.ClusterKernel`, declares a
    tensor by annotation alone (`A: T.Tensor[[M, N], dtype]`) or calls a `@T.macro` (which then opens the kernel)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return False
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return False
    return _opens_kernel(fn.body) or any(
        isinstance(st, ast.AnnAssign) and st.value is None for st in fn.body) or _calls_macro(func, fn.body)


def _calls_macro(func, stmts) -> bool:
    """True when one of `stmts` calls, by a plain name, a `@T.macro` that `func` sees (closure or globals)."""
    from ..language.types import MacroDef

    try:
        names = inspect.getclosurevars(func)
    except (TypeError, ValueError):
        return False
    visible = {**names.globals, **names.nonlocals}
    return any(isinstance(visible.get(name), MacroDef) for name in _called_names(stmts))


def _called_names(stmts) -> set:
    """Names called by plain name in `stmts`, not counting nested defs (a factory's prim_func calls its macros)."""
    out, todo = set(), list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            out.add(node.func.id)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _opens_kernel(stmts) -> bool:
    for st in stmts:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.With) and any(_is_kernel_call(item.context_expr) for item in st.items):
            return True
        for field in ("body", "orelse", "finalbody"):
            if _opens_kernel(getattr(st, field, []) or []):
                return True
    return False


def _is_kernel_call(e) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in LAUNCH_BUILTINS


class EagerKernel:
    """Call with tensors and scalars like the function's signature; returns what its `T.empty` outputs hold."""

    def __init__(self, func, target="auto", pass_configs=None):
        from ..language.capture import capture

        self.func = ArgumentBinder(func, "eager")  # TileLang's `.func`: parse_args / _parse_phase1_key
        self.target = target
        self.pass_configs = pass_configs  # TileLang's; the CUDA backend honours options.PASS_CONFIGS
        self.signature = inspect.signature(func)
        self.captured = capture(func)
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__doc__ = func.__doc__
        self._cache: dict = {}
        self._lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        """Specialise on the tensors' shapes/dtypes and the scalars, compile once, run, return the outputs."""
        kernel, inputs = self.specialize(*args, **kwargs)
        return kernel(*inputs)

    def specialize(self, *args, **kwargs):
        """(JITKernel, its input tensors in order) for a call with these arguments, without running it."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        tensors = {k: v for k, v in bound.arguments.items() if _is_tensor(v)}
        scalars = {k: v for k, v in bound.arguments.items() if k not in tensors}
        kernel = self._kernel(tensors, scalars)
        inputs = [tensors[p.name] for p in kernel.func.params[:len(kernel.func.params) - len(kernel.out_idx)]
                  if isinstance(p, N.Buffer) or p.dtype == "handle"]  # a `T.ptr` parameter: given a tensor
        return kernel, inputs

    def get_kernel_source(self, *args, **kwargs) -> str:
        """The generated source of the kernel these arguments (tensors, or dims and scalars) select."""
        if any(_is_tensor(a) for a in (*args, *kwargs.values())):
            return self.specialize(*args, **kwargs)[0].get_kernel_source()
        return self.compile(**dict(zip(self.signature.parameters, args)), **kwargs).get_kernel_source()

    def compile(self, *args, **values):
        """A JITKernel for given dim values and scalar arguments (no tensors needed), or for the arguments of a call
        (tensors and scalars, positional as in the kernel's signature)."""
        if args or any(_is_tensor(v) for v in values.values()):
            return self.specialize(*args, **values)[0]
        return self._build(*self._split(values))

    def par_compile(self, configs, num_workers=None, ignore_error: bool = False) -> list:
        """The JITKernels for several argument sets (each a dict, or a tuple in signature order, of what `compile`
        takes), in order (see `autotune_search.build_all`)."""
        def build(config):
            return self.compile(**config) if isinstance(config, dict) else self.compile(*config)

        return build_all(build, list(configs), num_workers, ignore_error)

    def get_tir(self, *args, **values) -> N.PrimFunc:
        """The tile-IR PrimFunc, without building it, for given dim values and scalar arguments, or for a call's
        arguments (positional as in the signature), where a tensor may be its annotation `T.Tensor((M, N))`."""
        if args or any(_is_shaped(v) for v in values.values()):
            bound = self.signature.bind(*args, **values)
            bound.apply_defaults()
            tensors = {k: v for k, v in bound.arguments.items() if _is_shaped(v)}
            scalars = {k: v for k, v in bound.arguments.items() if k not in tensors}
            return self._parse(scalars, _dims_from(self._parse(scalars, {}), tensors))
        return self._parse(*self._split(values))

    def _split(self, values: dict) -> tuple[dict, dict]:
        """(scalar arguments with the signature's defaults, dim values) of a compile/get_tir call."""
        params = self.signature.parameters
        scalars = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
        scalars.update({k: v for k, v in values.items() if k in params})
        return scalars, {k: v for k, v in values.items() if k not in params}

    def _kernel(self, tensors: dict, scalars: dict):
        from ..options import codegen_options

        key = (tuple((k, tuple(t.shape), str(t.dtype), t.device.type) for k, t in tensors.items()),
               tuple(sorted((k, repr(v)) for k, v in scalars.items())), codegen_options())
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        probe = self._parse(scalars, {})
        dims = _dims_from(probe, tensors)
        kernel = self._build(scalars, dims)
        with self._lock:
            self._cache[key] = kernel
        return kernel

    def _build(self, scalars: dict, dims: dict):
        func = self._parse(scalars, dims)
        return JITKernel(func, out_idx=func.out_idx, target=self.target, pass_configs=self.pass_configs)

    def _parse(self, scalars: dict, dims: dict) -> N.PrimFunc:
        from ..frontend import parse_captured

        env = dict(self.captured.env)
        for name, value in getattr(self.captured.pyfunc, "__globals__", {}).items():
            env.setdefault(name, value)  # module globals assigned after the `def` (Python reads them at call time)
        env.update(scalars)
        env["__tilelsp_consts__"] = dict(dims)
        cap = type(self.captured)(self.captured.pyfunc, self.captured.source, self.captured.filename,
                                  self.captured.first_line, self.captured.indent, env)
        label = f"{self.__name__}(" + ", ".join(f"{k}={v!r}" for k, v in {**dims, **scalars}.items()) + ")"
        sink = DiagnosticSink()
        func = parse_captured(cap, sink, factory=self.__name__, instance=label, eager=True)
        errors = [d for d in sink.items if d.is_error]
        if errors or func is None:
            raise CompileError(errors or sink.items, self.captured.filename)
        return func


def _is_tensor(v) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "data_ptr")


def _is_shaped(v) -> bool:
    """A tensor, or a `T.Tensor(shape, dtype)` standing for one."""
    return _is_tensor(v) or isinstance(v, TensorType)


def _dims_from(func: N.PrimFunc, tensors: dict) -> dict:
    """Values of the `T.const` dims, read off the tensors passed for the declared parameters."""
    dims: dict = {}
    for p in func.params:
        if not isinstance(p, N.Buffer) or p.name not in tensors:
            continue
        shape = logical_shape(tuple(tensors[p.name].shape), p.dtype)
        if len(shape) != len(p.shape):
            raise ValueError(f"argument '{p.name}' has {len(shape)} dimension(s) {shape} but the kernel declares "
                             f"{len(p.shape)}")
        for dim, actual in zip(p.shape, shape):
            if isinstance(dim, N.Var):
                dims.setdefault(dim.name, int(actual))
    missing = [p.name for p in func.params if isinstance(p, N.Buffer) and p.name not in tensors
               and p not in func.params[len(func.params) - len(func.out_idx or ()):]]
    if missing:
        raise TypeError(f"missing tensor argument(s) {', '.join(missing)} declared in the kernel body")
    return dims
