"""tilelang_core: a TileLang-compatible compiler core (check, lower, compile, run) on apache-tvm 0.27.

The check path (`check_source`) is pure Python and never imports tvm; `lower`, `compile` and `jit`
import it lazily.
"""
from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "check_source": ("tilelang_core.check", "check_source"),
    "CheckResult": ("tilelang_core.check", "CheckResult"),
    "CompileError": ("tilelang_core.diagnostics", "CompileError"),
    "lower": ("tilelang_core.lowering", "lower"),
    "compile": ("tilelang_core.runtime.jit", "compile"),
    "jit": ("tilelang_core.runtime.jit", "jit"),
    "JITKernel": ("tilelang_core.runtime.jit", "JITKernel"),
    "install_alias": ("tilelang_core.alias", "install_alias"),
    "language": ("tilelang_core.language", None),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'tilelang_core' has no attribute {name!r}")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


__all__ = sorted(_LAZY)
