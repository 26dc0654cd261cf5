"""`tilelang.transform`: PassConfigKey names and `simplify_prim_func`."""
from __future__ import annotations

import functools

from ..options import pass_config_key

__all__ = ["PassConfigKey", "simplify_prim_func"]


class _PassConfigKeyMeta(type):
    """Any `PassConfigKey.TL_<NAME>` is TileLang's config string for it (options.pass_config_key)."""

    def __getattr__(cls, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        return pass_config_key(name)


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
