"""The values the frontend computes with: module and builtin references, dtypes, unknowns and user functions.

Both the static checker (values built from the file's text) and the JIT (real Python values from a
captured environment, converted by `from_live`) evaluate into this small domain.
"""
from __future__ import annotations

import ast
import enum
import numbers
import pathlib
import sys
import types
from dataclasses import dataclass, field

from ..ir import nodes as N
from ..language.host_layout import Layout as HostLayout
from ..language.types import DType, MacroDef, PrimFuncDef, SymbolicDim, SymbolicExpr, TensorType

DTYPES = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
    "float8_e4m3 float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu "
    "float4_e2m1fn float6_e2m3fn float6_e3m2fn int4 uint4 uint1 int1 handle tfloat32 float4_e2m1_unpacked "
    "float8_e4m3b11fnuz float8_e3m4 float8_e8m0fnu float4_e2m1fnx2".split()
)
DTYPE_ALIASES = {"float": "float32", "half": "float16", "int": "int32", "double": "float64",
                 "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "e4m3_float8": "float8_e4m3",
                 "e5m2_float8": "float8_e5m2", "uint": "uint32", "long": "int64", "ptr": "handle"}
UNKNOWN_DTYPE = "unknown"


def normalize_dtype(name) -> str | None:
    """The canonical dtype name for a dtype string or DType, or None when it is not a dtype."""
    if not isinstance(name, str):
        return None
    s = DTYPE_ALIASES.get(str(name), str(name))
    if s in DTYPES:
        return s
    if s.startswith(("float", "int", "uint", "bfloat")) and "x" in s:  # vector types: float16x2
        base, _, lanes = s.rpartition("x")
        return s if base in DTYPES and lanes.isdigit() else None
    return None


@dataclass(frozen=True)
class ModuleRef:
    """A reference to a module: "tilelang", "tilelang.language" (T), "tilelang.layout", "math", or other."""

    name: str
    live: object = field(default=None, compare=False, repr=False)  # the module object, in live mode

    def attr(self, attr: str):
        """The value of `module.attr`."""
        fn = getattr(self.live, attr, None) if self.live is not None else None
        if getattr(fn, "__tilelang_core_pure__", False):  # a device query evaluated while parsing
            return fn
        if self.name == "tilelang.language":
            dt = normalize_dtype(attr)
            if dt is not None:
                return DType(dt)
            return BuiltinRef("T." + attr)
        if self.name == "tilelang" and attr in ("language", "layout", "tileop", "cuda", "intrinsics", "math"):
            return ModuleRef(f"tilelang.{attr}")
        if self.name == "tilelang":
            return BuiltinRef("tilelang." + attr)
        if self.name.startswith("tilelang."):
            return BuiltinRef(self.name + "." + attr)
        if self.name == "tvm" and attr == "tirx":
            return ModuleRef("tvm.tirx")
        if self.name == "tvm.tirx":  # scalar constructors, rewritten to T builtins (frontend/tirx.py)
            return BuiltinRef("tvm.tirx." + attr)
        if self.name == "math":
            import math

            return getattr(math, attr, Unknown(f"math.{attr}"))
        return Unknown(f"{self.name}.{attr}")


@dataclass(frozen=True)
class LiveNamespace:
    """A live object whose class sets `__tilelang_namespace__` (e.g. the tensor-core macro emitter of
    `compat/mma_emitter.py`): `obj.attr` inside a kernel is `from_live(getattr(obj, attr))`."""

    live: object = field(compare=False, repr=False)

    def attr(self, attr: str):
        """The value of `obj.attr`."""
        return from_live(getattr(self.live, attr)) if hasattr(self.live, attr) else Unknown(attr)


@dataclass(frozen=True)
class BuiltinRef:
    """A TileLang builtin by canonical name ("T.copy", "tilelang.jit", "tilelang.layout.make_swizzled_layout")."""

    name: str

    @property
    def short(self) -> str:
        """The last component of the name ("copy")."""
        return self.name.rsplit(".", 1)[-1]

    def attr(self, attr: str):
        """Enum members such as T.GemmWarpPolicy.FullRow."""
        return EnumValue(self.short, attr)


@dataclass(frozen=True)
class EnumValue:
    """A member of a TileLang enum (GemmWarpPolicy.FullRow)."""

    enum: str
    member: str


@dataclass(frozen=True)
class Unknown:
    """A value the frontend cannot compute statically; `text` is how the user wrote it."""

    text: str = "?"
    error: str = ""  # why evaluation failed, when it raised (e.g. "division by zero")


@dataclass(frozen=True)
class LiveLayout(Unknown):
    """A `T.Layout` / `T.Fragment` the running program built on the host (language/host_layout.py): unknown to the
    expression domain, but T.annotate_layout and `T.Parallel(..., loop_layout=)` read its thread map."""

    layout: object = field(default=None, compare=False)


class Poison:
    """The value of a name whose defining statement failed; uses of it are skipped without a second error."""

    def __repr__(self) -> str:
        return "<poison>"


POISON = Poison()


@dataclass(frozen=True)
class ConstDims:
    """`T.const("M, N")` (eager style): dims bound from argument shapes."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class TensorSpec:
    """A T.Tensor / T.Buffer annotation: shape (tuple of values) and dtype."""

    shape: tuple
    dtype: str
    scope: str = "global"


@dataclass(frozen=True, eq=False)
class LiveFunc:
    """A plain Python function of the running program; called in a kernel, it is inlined like a file's helper."""

    pyfunc: object


@dataclass(eq=False)
class UserFunc:
    """A function defined in the file (a factory, a macro, a helper) with the environment it closes over."""

    node: ast.FunctionDef
    env: object  # consteval.Env
    is_macro: bool = False
    source: object = None  # SourceMapper that produced its spans (live macros come from another file)
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The function's name."""
        return self.node.name


def is_expr(v) -> bool:
    """True for IR expressions."""
    return isinstance(v, (N.Const, N.Var, N.BinOp, N.Compare, N.BoolOp, N.UnaryOp, N.Call, N.Cast, N.Select, N.Load))


def is_scalar(v) -> bool:
    """True for Python numbers and bools."""
    return isinstance(v, (int, float, bool)) and not isinstance(v, enum.Enum)


def is_concrete(v) -> bool:
    """True for plain Python data known exactly: numbers, bools, strings and None, and tuples and lists of them (of a
    dict, its keys)."""
    if isinstance(v, (tuple, list)):
        return all(is_concrete(x) for x in v)
    if isinstance(v, dict):
        return all(is_concrete(x) for x in v)
    return is_scalar(v) or isinstance(v, str) or v is None


def to_expr(v, span=None):
    """A Python scalar or IR expression as an IR expression (None when it is neither)."""
    if is_expr(v):
        return v
    if isinstance(v, bool):
        return N.Const(v, "bool", span)
    if isinstance(v, int):
        return N.Const(v, "int32" if -(2**31) <= v < 2**31 else "int64", span)
    if isinstance(v, float):
        return N.Const(v, "float32", span)
    if isinstance(v, Unknown):
        return N.Var(v.text, "int32", "symbolic", span)
    return None


def canonical_module(name: str) -> str:
    """Map tilelang_core spellings onto tilelang ones ("tilelang_core.language" -> "tilelang.language")."""
    if name == "tilelang_core" or name.startswith("tilelang_core."):
        return "tilelang" + name[len("tilelang_core"):]
    return name


_DIM_VARS: dict = {}  # SymbolicDim -> its N.Var


def from_live(v, depth: int = 0):
    """Convert a real Python value from a captured environment into the frontend's value domain."""
    if isinstance(v, (bool, int, float, str, DType)) or v is None:
        return v
    if isinstance(v, pathlib.PurePath):  # a file name (T.CUDASourceCodeKernel's source_code_or_path)
        return v
    if isinstance(v, numbers.Integral):  # numpy integers and the like
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if type(v).__module__ == "torch" and type(v).__name__ == "dtype":  # torch.float16 -> "float16"
        dt = normalize_dtype(str(v).replace("torch.", ""))
        return DType(dt) if dt else Unknown(str(v))
    if isinstance(v, types.ModuleType):
        return ModuleRef(canonical_module(v.__name__), v)
    if isinstance(v, SymbolicDim):  # one Var per dim, however often the captured value is read
        return _DIM_VARS.setdefault(v, N.Var(v.name, v.dtype, "param"))
    if isinstance(v, SymbolicExpr):  # `M * 2` computed by the factory: the same expression over the dims
        return N.BinOp(v.op, to_expr(from_live(v.lhs, depth)), to_expr(from_live(v.rhs, depth)))
    if isinstance(v, TensorType):
        return TensorSpec(tuple(from_live(d) for d in v.shape), normalize_dtype(v.dtype) or v.dtype, v.scope)
    if isinstance(v, (tuple, list)) and depth < 4:
        return type(v)(from_live(x, depth + 1) for x in v)
    if isinstance(v, (MacroDef, PrimFuncDef)):
        return v
    if isinstance(v, enum.Enum):
        return EnumValue(type(v).__name__, v.name)
    if getattr(type(v), "__tilelang_namespace__", False):
        return LiveNamespace(v)
    if isinstance(v, type) and getattr(v, "__tilelang_namespace__", False):  # its constructor: constcalls.py
        return v
    if isinstance(v, type) and v.__name__ in ("DataType", "dtype") and v.__module__.split(".")[0] in ("tvm", "tvm_ffi"):
        return v  # tvm's DataType: `DataType(dtype).bits` (constcalls.call_value)
    if isinstance(v, dict) and depth < 4:
        return {k: from_live(x, depth + 1) for k, x in v.items()}
    if isinstance(v, HostLayout):
        return LiveLayout(type(v).__name__, layout=v)
    mod = canonical_module(getattr(v, "__module__", "") or "")
    if callable(v) and mod.startswith("tilelang"):
        short = getattr(v, "__name__", "?")
        return BuiltinRef("T." + short if mod.startswith("tilelang.language") else f"{mod}.{short}")
    if callable(v) and mod == "math":
        return v
    if isinstance(v, types.FunctionType) and _user_code(v):
        return LiveFunc(v)
    return Unknown(type(v).__name__)


def _user_code(fn) -> bool:
    """Whether `fn` was written outside the Python installation (the user's files, not a library)."""
    filename = fn.__code__.co_filename
    return not filename.startswith("<") and not filename.startswith((sys.prefix, sys.base_prefix))
