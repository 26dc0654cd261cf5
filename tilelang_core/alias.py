"""Run unmodified TileLang files on tilelang_core: make `import tilelang` resolve to this package.

Two switches, both documented here:

* In Python: `import tilelang_core; tilelang_core.install_alias()` before the file imports tilelang.
* From the shell: `python -m tilelang_core.run FILE [ARGS...]` installs the alias and runs FILE as
  `__main__` (its `if __name__ == "__main__":` block runs, `sys.argv` is `[FILE, *ARGS]`).

While the alias is installed, `@T.prim_func` raises the errors TileLang's parser raises at definition
(runtime/definition.py), each a CompileError that is also the Python error TileLang raises.

What `tilelang` then provides (docs/alias.md lists it with the behaviour of each):

* the core: `jit`, `compile`, `JITKernel`, `lower`, `language` (T), `layout`, `testing`, `profiler`
  (`do_bench`, `Profiler`), `autotune` / `autotuner` (a real search: `runtime.autotune`), `cdiv`,
  `next_power_of_2`, `math`, `PassConfigKey`, `TensorSupplyType`, `env`, cache switches;
* helper submodules from `tilelang_core.compat`: `carver` (`arch`, `template`, `roller`), `utils.tensor`,
  `contrib.nvcc`, `transform`, `engine` (`callback`), `tileop` (`base`), `tools` (`tools.cuda.iket`: in-kernel
  event tracing), `language.fp8`, `cuda.intrinsics` (`make_mma_swizzle_layout`), `cuda.intrinsics.sparse_layout`,
  `_ffi_api` (`Layout_repeat`), the tensor-core macro emitter
  `cuda.intrinsics.macro.mma_macro_generator.TensorCoreIntrinEmitter` (`compat.mma_emitter`) and
  `cuda.intrinsics.macro.wgmma_macro_generator.compute_gmma_descriptor` (`compat.wgmma_macro`);
* `tilelang.tvm` / `tilelang.DataType`: the installed apache-tvm, imported on first use (`compat.tvm` says
  why); while the alias is installed tvm also has TileLang's `tirx.PrimExpr` and `testing.requires_package`;
* what tilelang_core cannot do (the rest of `tilelang.cuda`: its other intrinsic emitters and layouts, AMD's
  `tilelang.rocm`, CUDA source callbacks) imports fine and raises `UnsupportedFeatureError` at the call.

When the real `tilelang` package is importable the alias is not installed (a warning says so) unless
`force=True`; set `TILELANG_CORE_ALIAS=force` to force it from the environment.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
import warnings

_MODULES = {
    "tilelang.language": "tilelang_core.language",
    "tilelang.language.fp8": "tilelang_core.compat.fp8",
    "tilelang.layout": "tilelang_core.language.layout",
    "tilelang.layout.swizzle": "tilelang_core.language.layout",
    "tilelang.layout.layout": "tilelang_core.language.host_layout",
    "tilelang.layout.fragment": "tilelang_core.language.host_layout",
    "tilelang.layout.cute": "tilelang_core.language.cute",
    "tilelang.testing": "tilelang_core.verify.testing",
    "tilelang.profiler": "tilelang_core.runtime.profiler",
    "tilelang.profiler.bench": "tilelang_core.compat.profiler_bench",
    "tilelang.autotuner": "tilelang_core.runtime.autotune",
    "tilelang.autotuner.param": "tilelang_core.runtime.autotune_param",
    "tilelang.autotuner.grouped_compile": "tilelang_core.runtime.autotune_grouped",
    "tilelang.carver": "tilelang_core.compat.carver",
    "tilelang.carver.arch": "tilelang_core.compat.carver",
    "tilelang.carver.arch.driver": "tilelang_core.compat.driver",
    "tilelang.carver.template": "tilelang_core.compat.carver_template",
    "tilelang.carver.roller": "tilelang_core.compat.carver_template",
    "tilelang.carver.roller.rasterization": "tilelang_core.compat.carver_template",
    "tilelang.utils": "tilelang_core.compat.utils",
    "tilelang.utils.tensor": "tilelang_core.compat.utils",
    "tilelang.contrib.nvcc": "tilelang_core.compat.nvcc",
    "tilelang.env": "tilelang_core.compat.env",
    "tilelang.errors": "tilelang_core.compat.errors",
    "tilelang.ir": "tilelang_core.compat.ir_spans",
    "tilelang.jit.diagnostics": "tilelang_core.runtime.jit_diagnostics",
    "tilelang.jit.kernel": "tilelang_core.runtime.jit",
    "tilelang.tools": "tilelang_core.compat.tools",
    "tilelang.tools.lower_trace": "tilelang_core.compat.lower_trace",
    "tilelang.tools.lower_trace.core": "tilelang_core.compat.lower_trace_core",
    "tilelang.transform": "tilelang_core.compat.transform",
    "tilelang.transform.simplify": "tilelang_core.compat.transform",
    "tilelang.engine": "tilelang_core.compat.engine",
    "tilelang.engine.callback": "tilelang_core.compat.engine",
    "tilelang.tileop": "tilelang_core.compat.tileop",
    "tilelang.tileop.base": "tilelang_core.compat.tileop",
    "tilelang.cuda.intrinsics": "tilelang_core.compat.cuda_intrinsics",
    "tilelang.cuda.intrinsics.sparse_layout": "tilelang_core.compat.sparse_layout",
    "tilelang.cuda.intrinsics.layout.mma_layout": "tilelang_core.compat.cuda_intrinsics",
    "tilelang.cuda.language.intrinsics": "tilelang_core.compat.mma_emitter",
    "tilelang.utils.language": "tilelang_core.compat.utils_language",
    "tilelang.cuda.intrinsics.macro.mma_macro_generator": "tilelang_core.compat.mma_emitter",
    "tilelang.cuda.intrinsics.macro.wgmma_macro_generator": "tilelang_core.compat.wgmma_macro",
    "tilelang.tools.cuda": "tilelang_core.compat.tools_cuda",
    "tilelang.tools.cuda.iket": "tilelang_core.compat.iket",
    "tilelang.rocm.target": "tilelang_core.compat.rocm_target",
    "tilelang.language.tir": "tilelang_core.compat.tir_ir",
    "tilelang.language.tir.ir": "tilelang_core.compat.tir_ir",
}
_BUILT = ("tilelang", "tilelang.jit", "tilelang.math", "tilelang.contrib")
_UNSUPPORTED = {  # module prefix -> why
    "tilelang.cuda": "TileLang's CUDA intrinsic emitters generate TVM TIR for its own backend; write the "
                     "kernel with T.gemm / T.copy instead",
    "tilelang.rocm": "AMD devices are not a tilelang_core target",
    "tilelang.language.eager": "TileLang's eager-mode AST rewriter turns a kernel function into IR-builder calls; "
                               "tilelang_core's frontend reads the kernel's source itself, so there is no rewritten "
                               "function (`tilelsp ir FILE` shows what it parsed)",
}


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by returning the already-built tilelang_core module object."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return _build_module(spec.name, self.target)

    def exec_module(self, module):
        return None


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Maps `tilelang` and `tilelang.<sub>` to tilelang_core modules; loads `tvm` with TileLang's extra names."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "tvm":
            from .compat.tvm import tvm_spec

            return tvm_spec(fullname, path)
        if fullname != "tilelang" and not fullname.startswith("tilelang."):
            return None
        mapped = _target_of(fullname)
        if mapped is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(mapped), is_package=True)


def _unsupported_prefix(fullname: str) -> str | None:
    return next((p for p in _UNSUPPORTED if fullname == p or fullname.startswith(p + ".")), None)


def _target_of(fullname: str) -> str | None:
    """The tilelang_core module (or built alias) that backs `fullname`, or None when there is none."""
    if fullname in _BUILT or fullname in _MODULES:
        return _MODULES.get(fullname, fullname)
    if _unsupported_prefix(fullname):
        return fullname
    candidate = "tilelang_core." + fullname.split(".", 1)[1]
    try:
        return candidate if importlib.util.find_spec(candidate) is not None else None
    except (ImportError, ValueError):
        return None


class _CallableModule(types.ModuleType):
    """`tilelang.jit` is both a module and the decorator: importing the submodule must not break `@tilelang.jit`."""

    def __call__(self, *args, **kwargs):
        return self.jit(*args, **kwargs)


def _build_module(name: str, target: str):
    if target == "tilelang":
        return _TopModule()
    prefix = _unsupported_prefix(target)
    if prefix is not None:
        from .compat import UnsupportedModule

        return UnsupportedModule(name, _UNSUPPORTED[prefix])
    if target == "tilelang.math":
        mod = types.ModuleType(name, "tilelang.math (alias): integer helpers")
        mod.cdiv, mod.next_power_of_2 = cdiv, next_power_of_2
        return mod
    if target == "tilelang.contrib":
        mod = types.ModuleType(name, "tilelang.contrib (alias): nvcc queries")
        mod.__path__ = []
        mod.nvcc = importlib.import_module("tilelang_core.compat.nvcc")
        return mod
    if target == "tilelang.jit":
        from .runtime import jit as _jit

        mod = _CallableModule(name, "tilelang.jit (alias): jit, compile, JITKernel")
        mod.jit, mod.compile, mod.JITKernel = _jit.jit, _jit.compile, _jit.JITKernel
        return mod
    return importlib.import_module(target)


def cdiv(a: int, b: int) -> int:
    """Ceiling division of ints (`tilelang.cdiv`)."""
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


# `tilelang.<name>` resolved on first access: (module, attribute or None for the module itself)
_LAZY = {
    "jit": ("tilelang_core.runtime.jit", "jit"),
    "compile": ("tilelang_core.runtime.jit", "compile"),
    "par_compile": ("tilelang_core.runtime.jit", "par_compile"),
    "JITKernel": ("tilelang_core.runtime.jit", "JITKernel"),
    "lower": ("tilelang_core.compat.engine", "lower"),
    "language": ("tilelang_core.language", None),
    "dtypes": ("tilelang_core.language.dtypes", None),
    "layout": ("tilelang_core.language.layout", None),
    "_ffi_api": ("tilelang_core.compat.ffi_api", None),
    "testing": ("tilelang_core.verify.testing", None),
    "profiler": ("tilelang_core.runtime.profiler", None),
    "Profiler": ("tilelang_core.runtime.profiler", "Profiler"),
    "autotuner": ("tilelang_core.runtime.autotune", None),
    "autotune": ("tilelang_core.runtime.autotune", "autotune"),
    "PassConfigKey": ("tilelang_core.compat.transform", "PassConfigKey"),
    "TensorSupplyType": ("tilelang_core.compat.utils", "TensorSupplyType"),
    "env": ("tilelang_core.compat.env", "env"),
    "DataType": ("tilelang_core.compat.tvm", "DataType"),
    "register_cuda_postproc": ("tilelang_core.compat.engine", "register_cuda_postproc"),
    "register_hip_postproc": ("tilelang_core.compat.engine", "register_hip_postproc"),
    "register_c_postproc": ("tilelang_core.compat.engine", "register_c_postproc"),
    **{sub: (f"tilelang.{sub}", None)
       for sub in ("carver", "utils", "contrib", "tools", "transform", "engine", "tileop", "cuda", "math")},
}


class _TopModule(types.ModuleType):
    """The `tilelang` module object: tilelang_core's public API under TileLang's names, resolved lazily."""

    def __init__(self):
        import tilelang_core

        super().__init__("tilelang", "tilelang (alias of tilelang_core; see tilelang_core.alias)")
        self.__path__ = []  # a package, so that `import tilelang.language` works
        self.__file__ = tilelang_core.__file__
        self.__version__ = "0.1.15+tilelang_core." + tilelang_core.__version__
        self.__tilelang_core_alias__ = True
        self.cdiv, self.next_power_of_2 = cdiv, next_power_of_2

    def __getattr__(self, name: str):
        if name == "tvm":  # the installed apache-tvm, imported now (compat/tvm.py)
            from .compat.tvm import tvm

            self.tvm = tvm()
            return self.tvm
        if name not in _LAZY:
            if name in ("disable_cache", "enable_cache", "is_cache_enabled"):
                return getattr(self.env, name)
            if name == "set_log_level":
                return _set_log_level
            raise AttributeError(f"module 'tilelang' (tilelang_core alias) has no attribute {name!r}")
        module_name, attr = _LAZY[name]
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
        setattr(self, name, value)
        return value


def _set_log_level(level) -> None:
    """`tilelang.set_log_level`: sets the level of the "tilelang_core" logger."""
    import logging

    logging.getLogger("tilelang_core").setLevel(level)


def real_tilelang_available() -> bool:
    """True when a real `tilelang` package (not this alias) is importable."""
    if getattr(sys.modules.get("tilelang"), "__tilelang_core_alias__", False):
        return False
    finders = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    for finder in finders:
        find = getattr(finder, "find_spec", None)
        try:
            if find is not None and find("tilelang", None) is not None:
                return True
        except (ImportError, ValueError, AttributeError):
            continue
    return False


def is_installed() -> bool:
    """True when the alias finder is on sys.meta_path."""
    return any(isinstance(f, _AliasFinder) for f in sys.meta_path)


def install_alias(force: bool | None = None) -> bool:
    """Make `import tilelang` resolve to tilelang_core; returns True when the alias is active."""
    if force is None:
        force = os.environ.get("TILELANG_CORE_ALIAS", "").lower() == "force"
    if is_installed():
        return True
    if not force and real_tilelang_available():
        warnings.warn("the real 'tilelang' package is importable, so install_alias() left it alone; "
                      "pass force=True (or set TILELANG_CORE_ALIAS=force) to use tilelang_core instead",
                      stacklevel=2)
        return False
    for key in [k for k in sys.modules if k == "tilelang" or k.startswith("tilelang.")]:
        del sys.modules[key]
    sys.meta_path.insert(0, _AliasFinder())
    from .compat.tvm import patch_tvm
    from .language.types import DEFINITION_CHECKS
    from .runtime.definition import check_definition

    patch_tvm()
    if check_definition not in DEFINITION_CHECKS:
        DEFINITION_CHECKS.append(check_definition)
    return True


def uninstall_alias() -> None:
    """Remove the alias (and any `tilelang` modules it provided)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    for key in [k for k in sys.modules if k == "tilelang" or k.startswith("tilelang.")]:
        if key == "tilelang" and not getattr(sys.modules[key], "__tilelang_core_alias__", False):
            continue
        del sys.modules[key]
    from .compat.tvm import unpatch_tvm
    from .language.types import DEFINITION_CHECKS
    from .runtime.definition import check_definition

    unpatch_tvm()
    if check_definition in DEFINITION_CHECKS:
        DEFINITION_CHECKS.remove(check_definition)
