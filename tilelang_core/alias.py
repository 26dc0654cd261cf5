"""Run unmodified TileLang files on tilelang_core: make `import tilelang` resolve to this package.

Two switches, both documented here:

* In Python: `import tilelang_core; tilelang_core.install_alias()` before the file imports tilelang.
* From the shell: `python -m tilelang_core.run FILE [ARGS...]` installs the alias and runs FILE as
  `__main__` (its `if __name__ == "__main__":` block runs, `sys.argv` is `[FILE, *ARGS]`).

After the switch `import tilelang`, `import tilelang.language as T`, `from tilelang import language as T`,
`tilelang.jit`, `tilelang.compile`, `tilelang.layout` and a minimal `tilelang.testing` come from
tilelang_core. When the real `tilelang` package is importable the alias is not installed (a warning
says so) unless `force=True`; set `TILELANG_CORE_ALIAS=force` to force it from the environment.
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

_SUBMODULES = {
    "tilelang.language": "tilelang_core.language",
    "tilelang.layout": "tilelang_core.language.layout",
    "tilelang.testing": "tilelang_core.verify.testing",
    "tilelang.profiler": "tilelang_core.runtime.profiler",
    "tilelang.autotuner": "tilelang.autotuner",
    "tilelang.math": "tilelang.math",
    "tilelang.jit": None,  # attribute (the decorator), also importable as a module below
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
    """Maps `tilelang` and `tilelang.<sub>` to tilelang_core modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tilelang" and not fullname.startswith("tilelang."):
            return None
        mapped = _target_of(fullname)
        if mapped is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(mapped), is_package=True)


def _target_of(fullname: str) -> str | None:
    """The tilelang_core module that backs `fullname`, or None when there is none."""
    if fullname == "tilelang":
        return "tilelang"
    if fullname in _SUBMODULES:
        return _SUBMODULES[fullname] or "tilelang.jit"
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
        return _top_module()
    if target == "tilelang.autotuner":
        from .runtime import jit as _jit

        mod = types.ModuleType(name, "tilelang.autotuner (alias, minimal): autotune uses the first config")
        mod.autotune = _jit.autotune
        return mod
    if target == "tilelang.math":
        mod = types.ModuleType(name, "tilelang.math (alias): integer helpers")
        mod.cdiv, mod.next_power_of_2 = cdiv, next_power_of_2
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


class _PassConfigKeyMeta(type):
    """Any `PassConfigKey.TL_<NAME>` is the config string "tl.<name>" (TileLang's spelling of its keys)."""

    def __getattr__(cls, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        return "tl." + name.lower().removeprefix("tl_")


class PassConfigKey(metaclass=_PassConfigKeyMeta):
    """`tilelang.PassConfigKey`: pass-config names accepted (and ignored by our pipeline) in `pass_configs=`."""


def _top_module():
    """The `tilelang` module object: the public API of tilelang_core under TileLang's names."""
    import tilelang_core
    from .runtime import jit as _jit

    mod = types.ModuleType("tilelang", "tilelang (alias of tilelang_core; see tilelang_core.alias)")
    mod.__path__ = []  # a package, so that `import tilelang.language` works
    mod.__version__ = "0.1.15+tilelang_core." + tilelang_core.__version__
    mod.jit, mod.compile, mod.JITKernel = _jit.jit, _jit.compile, _jit.JITKernel
    mod.lower = lambda *a, **k: tilelang_core.lower(*a, **k)
    mod.language = importlib.import_module("tilelang_core.language")
    mod.layout = importlib.import_module("tilelang_core.language.layout")
    mod.testing = importlib.import_module("tilelang_core.verify.testing")
    mod.profiler = importlib.import_module("tilelang_core.runtime.profiler")
    mod.cdiv, mod.next_power_of_2 = cdiv, next_power_of_2
    mod.PassConfigKey = PassConfigKey
    mod.autotune = _jit.autotune
    mod.math = _build_module("tilelang.math", "tilelang.math")
    mod.disable_cache = mod.enable_cache = lambda *a, **k: None
    mod.set_log_level = lambda *a, **k: None
    mod.__tilelang_core_alias__ = True
    return mod


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
    return True


def uninstall_alias() -> None:
    """Remove the alias (and any `tilelang` modules it provided)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    for key in [k for k in sys.modules if k == "tilelang" or k.startswith("tilelang.")]:
        if key == "tilelang" and not getattr(sys.modules[key], "__tilelang_core_alias__", False):
            continue
        del sys.modules[key]
