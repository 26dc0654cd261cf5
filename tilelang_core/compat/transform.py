"""`tilelang.transform` (and `tilelang.transform.simplify`): PassConfigKey names, `simplify_prim_func`,
`apply_simplify`."""
from __future__ import annotations

import functools

from ..options import pass_config_key

__all__ = ["ConfigKey", "PassConfigKey", "apply_simplify", "simplify_prim_func"]


class ConfigKey(str):
    """One pass-config key: TileLang's config string ("tl.<name>") that also answers its enum member's `.name` /
    `.value`."""

    def __new__(cls, value: str, member: str | None = None):
        key = super().__new__(cls, value)
        key._member = member or "TL_" + value.removeprefix("tl.").upper()
        return key

    @property
    def name(self) -> str:
        """The member's name, e.g. "TL_ENABLE_FAST_MATH"."""
        return self._member

    @property
    def value(self) -> str:
        """The config string, e.g. "tl.enable_fast_math"."""
        return str(self)


class _PassConfigKeyMeta(type):
    """Any `PassConfigKey.TL_<NAME>` is TileLang's config string for it (options.pass_config_key)."""

    def __getattr__(cls, name: str) -> ConfigKey:
        if name.startswith("_"):
            raise AttributeError(name)
        return ConfigKey(pass_config_key(name), name)


class PassConfigKey(metaclass=_PassConfigKeyMeta):
    """`tilelang.PassConfigKey`: pass-config names accepted in `pass_configs=`; the CUDA backend honours those of
    `tilelang_core.options.PASS_CONFIGS` (docs/options.md) and ignores the others."""


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
