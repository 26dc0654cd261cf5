"""Runtime value types of the `T` namespace when a TileLang file is executed (JIT path).

The static checker never creates these; the frontend recognises them in a live environment.
"""
from __future__ import annotations

from dataclasses import dataclass


class DType(str):
    """A dtype name that is also a string ("float16" == T.float16) and callable as a cast: T.float32(x)."""

    def __call__(self, value=None):
        return value


@dataclass(frozen=True)
class SymbolicDim:
    """A runtime dimension from T.dynamic("m") / T.symbolic("m"); bound from tensor shapes at call time."""

    name: str
    dtype: str = "int32"


@dataclass(frozen=True)
class TensorType:
    """T.Tensor((M, K), dtype) / T.Buffer(...) / T.Tensor[(M, K), dtype] as a parameter annotation."""

    shape: tuple
    dtype: str = "float32"
    scope: str = "global"


# Callables run on every new PrimFuncDef, in order; one raises to refuse the definition. The alias installs
# TileLang's parse-time errors here (runtime/definition.py); without it a kernel's errors wait for its compile.
DEFINITION_CHECKS: list = []


@dataclass
class PrimFuncDef:
    """What `@T.prim_func` returns at run time: the captured function, compiled on demand by the JIT."""

    captured: object  # language.capture.CapturedFunc

    def __post_init__(self):
        for check in DEFINITION_CHECKS:
            check(self)

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return self.captured.name


@dataclass
class MacroDef:
    """What `@T.macro` returns at run time: a captured helper inlined where a kernel calls it."""

    captured: object

    @property
    def name(self) -> str:
        """The macro's name."""
        return self.captured.name
