"""`tilelang.transform` (and `tilelang.transform.simplify`): PassConfigKey names, `simplify_prim_func`,
`apply_simplify`."""
from __future__ import annotations

import functools

__all__ = ["ConfigKey", "PassConfigKey", "apply_simplify", "simplify_prim_func"]


class ConfigKey(str):
    """One pass-config key: the string "tl.<name>" that also answers TileLang's enum-member `.name` / `.value`."""

    @property
    def name(self) -> str:
        """The member's name, e.g. "TL_ENABLE_FAST_MATH"."""
        return "TL_" + self.removeprefix("tl.").upper()

    @property
    def value(self) -> str:
        """The config string, e.g. "tl.enable_fast_math"."""
        return str(self)


class _PassConfigKeyMeta(type):
    """Any `PassConfigKey.TL_<NAME>` is the config key "tl.<name>" (TileLang's spelling of its keys)."""

    def __getattr__(cls, name: str) -> ConfigKey:
        if name.startswith("_"):
            raise AttributeError(name)
        return ConfigKey("tl." + name.lower().removeprefix("tl_"))


class PassConfigKey(metaclass=_PassConfigKeyMeta):
    """`tilelang.PassConfigKey`: pass-config names accepted in `pass_configs=`; the CUDA backend honours
    TL_ENABLE_FAST_MATH (codegen/cuda/fastmath.py) and ignores the others."""


def simplify_prim_func(func):
    """Decorator on a kernel factory: TileLang simplifies the returned PrimFunc; tilelang_core's pipeline
    simplifies every kernel while lowering, so the kernel is returned as built."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def apply_simplify(func):
    """TileLang simplifies a PrimFunc here; tilelang_core's pipeline simplifies every kernel while lowering, so the
    kernel is returned as built."""
    return func
