"""The runtime `T` namespace: what `import tilelang_core.language as T` gives when a TileLang file is executed.

Kernel bodies are never run as Python: `T.prim_func`/`T.macro` capture their source for the frontend.
The names a factory uses *outside* a body work for real here (dtypes and `T.dtype`, `T.Tensor`,
`T.dynamic`, `T.ceildiv` on ints, `T.cast` of a number, `T.GemmWarpPolicy`); every other builtin is a stub that says where it belongs.
Neither tvm nor torch is imported.
"""
from __future__ import annotations

import enum

# Private names only: `capture`, `registry`, `dtypes`, `types` must stay the submodules. `capture`
# (which needs inspect) is imported on first use: the checker imports this package on every run.
from .arg_checks import check_stub_arguments as _check_stub_arguments
from .arg_checks import is_tvm_object as _is_tvm_object
from .dtypes import DTYPES as _DTYPES
from .dtypes import DTypeValue as _DType
from .dtypes import dtype_value as _dtype_value
from .dtypes import normalize_dtype as _normalize_dtype
from .builtin import Builtin as _Builtin
from .registry import lookup as _lookup
from .registry import registry as _registry
from .host_layout import Fragment, Layout
from .cast_rounding import cast
from .types import SURFACE as _SURFACE
from .types import DType, MacroDef, PrimFuncDef, SymbolicDim, TensorType

_MODULE = "tilelang_core.language"


# dtypes are served by __getattr__ so that `T.int`, `T.float` and `T.bool` never shadow builtins here; each
# attribute name maps to its dtype's name, made a value (dtypes.dtype_value) when read.
_DTYPE_ATTRS: dict[str, str] = {}
for _info in _DTYPES.values():
    _DTYPE_ATTRS[_info.name] = _info.name
    for _alias in _info.attr_aliases:
        _DTYPE_ATTRS[_alias] = _info.name


def _dtype(value) -> DType:
    """A DType for any accepted dtype spelling (unknown names are kept as written)."""
    if isinstance(value, _DType):
        return value
    return _dtype_value(_normalize_dtype(value) or str(value))


def dtype(value) -> DType:
    """The TileLang dtype for a name, a `T.<dtype>`, a torch/numpy dtype or `int`/`float`/`bool`."""
    name = _normalize_dtype(value)
    if name is None:
        raise TypeError(f"unknown dtype {value!r}; use a name such as \"float16\" or a torch dtype")
    return _dtype_value(name)


def _shape(shape) -> tuple:
    """A shape tuple from an int, a tuple/list, or a single symbolic dimension."""
    if isinstance(shape, (tuple, list)):
        return tuple(shape)
    return (shape,)


class _TensorProxy:
    """`T.Tensor` / `T.Buffer`: callable `T.Tensor((M, K), dtype)` and subscriptable `T.Tensor[(M, K), dtype]`."""

    def __init__(self, name: str, scope: str):
        self.__name__ = self.__qualname__ = name
        self._scope = scope

    def __call__(self, shape, dtype="float32", *args, scope=None, **kwargs) -> TensorType:
        """The parameter annotation for a buffer of `shape` and `dtype`."""
        return TensorType(_shape(shape), _dtype(dtype), scope or self._scope)

    def __getitem__(self, key) -> TensorType:
        """The subscript form: `T.Tensor[(M, K), "float16"]` or `T.Tensor[M, K, "float16"]`."""
        if not isinstance(key, tuple):
            return self(key)
        if key and _normalize_dtype(key[-1]) is not None and not isinstance(key[-1], (int, float)):
            shape = key[0] if len(key) == 2 and isinstance(key[0], (tuple, list)) else key[:-1]
            return self(shape, key[-1])
        return self(key)

    def __repr__(self) -> str:
        return f"T.{self.__name__}"


Tensor = _TensorProxy("Tensor", "global")
Buffer = _TensorProxy("Buffer", "global")
SharedBuffer = _TensorProxy("SharedBuffer", "shared.dyn")  # macro parameter annotations
FragmentBuffer = _TensorProxy("FragmentBuffer", "local.fragment")
LocalBuffer = _TensorProxy("LocalBuffer", "local")


def StridedTensor(shape, strides, dtype="float32") -> TensorType:
    """A global tensor parameter with explicit strides (the strides are checked by the JIT at call time)."""
    return TensorType(_shape(shape), _dtype(dtype), "global")


Var = SymbolicDim  # TileLang's tvm Var: what T.dynamic / T.symbolic give (`isinstance(M, T.Var)`)


def _names(name: str) -> list[str]:
    return [n for n in name.replace(",", " ").split() if n]


def dynamic(name: str, dtype="int32"):
    """A symbolic dimension bound from tensor shapes at call time; "m, n" gives a tuple of them."""
    dims = tuple(SymbolicDim(n, str(_dtype(dtype))) for n in _names(name))
    return dims[0] if len(dims) == 1 else dims


symbolic = dynamic


def const(name: str, dtype="int32"):
    """Eager-style dimension markers (`M, N = T.const("M, N")`), bound from the argument shapes."""
    return dynamic(name, dtype)


def empty(*shape, dtype="float32") -> TensorType:
    """Eager-style output declaration `T.empty((M, N), T.float16)`; the JIT allocates and returns it."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return TensorType(tuple(shape[0]), _dtype(dtype), "global")
    if len(shape) == 2 and isinstance(shape[0], (tuple, list)) and isinstance(shape[1], str):
        return TensorType(tuple(shape[0]), _dtype(shape[1]), "global")
    return TensorType(tuple(shape), _dtype(dtype), "global")


def _surface(defn):
    """A PrimFuncDef's PrimFunc-shaped view (types.SURFACE): its parse, read through TileLang's names."""
    from ..frontend.surface import surface_of

    return surface_of(defn)


_SURFACE.append(_surface)


def _capture(func):
    from .capture import capture

    return capture(func)


def prim_func(func=None, *, eager_jit=False):
    """Capture a kernel function's source for compilation (usable as `@T.prim_func` or `@T.prim_func()`)."""
    if func is None:
        return lambda f: PrimFuncDef(_capture(f))
    return PrimFuncDef(_capture(func))


def macro(func) -> MacroDef:
    """Capture a helper that kernels inline where they call it."""
    return MacroDef(_capture(func))


inline = macro


class GemmWarpPolicy(enum.Enum):
    """How the warps of a block split the M x N tile of a T.gemm (a plain Enum, so the frontend sees a member)."""

    Square = 0
    FullRow = 1
    FullCol = 2

    def __int__(self) -> int:
        return self.value


def ceildiv(lhs, rhs):
    """Integer ceiling division; on Python ints it runs here, symbolic operands belong in a kernel body."""
    if isinstance(lhs, int) and isinstance(rhs, int) and not isinstance(lhs, bool):
        return -(-lhs // rhs)
    raise RuntimeError("T.ceildiv of symbolic values can only be used inside a @T.prim_func kernel body")


_STUBS: dict[str, object] = {}


def _make_stub(builtin: _Builtin, module: str = _MODULE):
    """A function named like the builtin that raises UnsupportedFeatureError (a RuntimeError, the refusal of a
    TileLang API we lack): it only has meaning inside a kernel body."""
    label = builtin.name

    def stub(*args, **kwargs):
        from ..compat import UnsupportedFeatureError

        _check_stub_arguments(builtin, args, kwargs)
        if any(_is_tvm_object(a) for a in (*args, *kwargs.values())):
            from ..compat.host_ir import host_builder

            build = host_builder(label.removeprefix("T."))
            if build is not None:
                return build(*args, **kwargs)
            raise UnsupportedFeatureError(f"{label} on TVM IR objects outside a kernel",
                                          f"tilelang_core builds TVM IR on the host for the fast-math intrinsics "
                                          f"only; call {label} in a @T.prim_func body or a @T.macro, where the "
                                          "frontend reads it")
        raise UnsupportedFeatureError(f"{label} outside a kernel body",
                                      f"{label} can only be used inside a @T.prim_func kernel body or a @T.macro, "
                                      "where the frontend reads it (TileLang's host-side TVM IR is not built)")

    stub.__name__ = stub.__qualname__ = builtin.name.rsplit(".", 1)[-1]
    stub.__module__ = module
    stub.__doc__ = builtin.doc or f"{builtin.signature}"
    return stub


def stub_for(name: str, module: str = _MODULE):
    """The (cached) runtime stub for a qualified builtin name such as "T.copy"."""
    if name not in _STUBS:
        builtin = _lookup(name)
        if builtin is None:
            raise KeyError(name)
        _STUBS[name] = _make_stub(builtin, module)
    return _STUBS[name]


def __getattr__(name: str):
    if name.startswith("__") and _lookup(f"T.{name}") is None:  # T.__exp (fast math) is a builtin; __path__ is not
        raise AttributeError(name)
    if name in _DTYPE_ATTRS:
        return _dtype_value(_DTYPE_ATTRS[name])
    if _normalize_dtype(name) == name:  # a vector dtype: T.float32x2, T.bfloat16x2, T.int8x4
        return _dtype_value(name)
    if _lookup(f"T.{name}") is not None:
        return stub_for(f"T.{name}")
    raise AttributeError(f"module 'tilelang.language' has no attribute {name!r}; see docs/language.md "
                         "for the supported builtins")


def __dir__() -> list[str]:
    short = {n.split(".", 1)[1] for n in _registry() if n.startswith("T.") and n.count(".") == 1}
    return sorted(set(globals()) | set(_DTYPE_ATTRS) | short)
