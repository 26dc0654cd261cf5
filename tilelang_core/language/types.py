"""Runtime value types of the `T` namespace when a TileLang file is executed (JIT path).

The static checker never creates these; the frontend recognises them in a live environment.
"""
from __future__ import annotations

from dataclasses import dataclass, field


class DType(str):
    """A dtype name that is also a string ("float16" == T.float16) and callable as a cast: T.float32(x); with no
    value, `T.int32()` is a symbolic scalar of that dtype (TileLang's unnamed tvm Var)."""

    def __call__(self, value=None):
        return SymbolicDim(f"{self}_var", str(self)) if value is None else value


class SymbolicArith:
    """Integer arithmetic on symbolic values (`M * 2`, `n // 4`, `a & 0xFF`): builds a SymbolicExpr, which the
    frontend reads as the same expression over the dims."""

    def _op(self, op: str, other, reverse: bool = False):
        if not isinstance(other, (int, SymbolicArith)) or isinstance(other, bool):
            return NotImplemented
        return SymbolicExpr(op, other, self) if reverse else SymbolicExpr(op, self, other)


_OPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "and": "&", "or": "|", "xor": "^",
        "lshift": "<<", "rshift": ">>"}
for _name, _sym in _OPS.items():
    setattr(SymbolicArith, f"__{_name}__", lambda self, o, _s=_sym: self._op(_s, o))
    setattr(SymbolicArith, f"__r{_name}__", lambda self, o, _s=_sym: self._op(_s, o, reverse=True))


@dataclass(frozen=True)
class SymbolicDim(SymbolicArith):
    """A runtime dimension from T.dynamic("m") / T.symbolic("m"); bound from tensor shapes at call time."""

    name: str
    dtype: str = "int32"


@dataclass(frozen=True)
class SymbolicExpr(SymbolicArith):
    """`lhs op rhs` over symbolic dims and ints, computed by the factory's Python code (e.g. `M * 2`)."""

    op: str
    lhs: object
    rhs: object


@dataclass(frozen=True)
class TensorType:
    """T.Tensor((M, K), dtype) / T.Buffer(...) / T.Tensor[(M, K), dtype] as a parameter annotation."""

    shape: tuple
    dtype: str = "float32"
    scope: str = "global"


# Callables run on every new PrimFuncDef, in order; one raises to refuse the definition. The alias installs
# TileLang's parse-time errors here (runtime/definition.py); without it a kernel's errors wait for its compile.
DEFINITION_CHECKS: list = []


# The one callable that makes a PrimFuncDef's `tvm.tir.PrimFunc`-shaped view (attrs, params, buffer_map, body,
# script()) from its parse: installed by the `T` namespace (language/__init__.py), which may reach the frontend;
# this module may not, the frontend imports it.
SURFACE: list = []


@dataclass
class PrimFuncDef:
    """What `@T.prim_func` returns at run time: the captured function, compiled on demand by the JIT. It also reads
    like TileLang's `tvm.tir.PrimFunc` (`attrs`, `params`, `buffer_map`, `body`, `script()`), from its parse, made
    on first use (frontend/surface.py)."""

    captured: object  # language.capture.CapturedFunc
    view: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        for check in DEFINITION_CHECKS:
            check(self)

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return self.captured.name

    def surface(self):
        """The PrimFunc-shaped view of this kernel (parsed once; CompileError when the kernel has errors)."""
        if self.view is None:
            self.view = SURFACE[0](self)
        return self.view

    @property
    def attrs(self):
        """TileLang's function attributes: global_symbol, tilelang_out_idx (returned T.empty outputs, counted from
        the end), tilelang_pass_configs and tilelang_compile_flags (when the body annotates them)."""
        return self.surface().attrs

    @property
    def params(self) -> list:
        """The kernel's parameters in call order: tile-IR Buffers (tensors) and Vars (scalars)."""
        return self.surface().params

    @property
    def buffer_map(self) -> dict:
        """Each tensor parameter mapped to its Buffer (a tile-IR Buffer is its own parameter)."""
        return self.surface().buffer_map

    @property
    def body(self):
        """The kernel's body, a tile-IR statement."""
        return self.surface().body

    def script(self) -> str:
        """The kernel as TileLang-style Python text (the `parsed` stage of `tilelsp lower`)."""
        return self.surface().script()


@dataclass
class MacroDef:
    """What `@T.macro` returns at run time: a captured helper inlined where a kernel calls it."""

    captured: object

    @property
    def name(self) -> str:
        """The macro's name."""
        return self.captured.name
