"""`tilelang.tvm` and `tilelang.DataType`: the installed apache-tvm 0.27, imported on first use.

Why the real package and not a small stand-in: TileLang puts its bundled TVM on `sys.path`, so files that do
`from tilelang import tvm` go on to `from tvm import DataType` / `from tvm import tirx` — plain imports that
a stand-in object cannot answer, and that must reach the one tvm our code generators use. The corpus reads
`DataType(dtype).bits`, `tvm.target.Target(...)`, `tvm.tirx.const` and names `tirx.PrimExpr` in annotations;
0.27 has all of these except `tirx.PrimExpr` (it merged PrimExpr into `tvm.ir.Expr`), `tirx.Call` (now `tvm.ir.Call`),
`.dtype` on expressions (now `.ty.dtype`), `tvm.TVMError` (0.27 raises RuntimeError subclasses),
`tvm.testing.requires_package`, `tvm.arith` (0.27's `tvm.sym`) and `tvm.tirx.stmt_functor` (its `post_order_visit`
walks the tile IR of a kernel's `.body`: compat/stmt_functor.py), which `patch_tvm` adds (and `unpatch_tvm` removes)
while the alias is installed. The import costs one to a few seconds, paid only by files that touch tvm (the JIT
imports it to compile anyway); `import tilelang` alone stays free of it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

_ADDED = "__tilelang_core_added__"  # on a patched module: the names the patch added


def tvm():
    """The tvm module (imported now if needed), with TileLang's extra names."""
    module = importlib.import_module("tvm")
    patch_tvm()
    return module


def DataType(*args, **kwargs):  # noqa: N802 -- TileLang's name
    """`tvm.DataType`: DataType("float16").bits == 16."""
    return tvm().DataType(*args, **kwargs)


def patch_tvm() -> None:
    """Give an imported tvm TileLang's `tirx.PrimExpr` and `tirx.Call` (0.27's `tvm.ir.Expr`, `tvm.ir.Call`),
    `TVMError` (RuntimeError), `testing.requires_package`, `.dtype` on expressions (0.27 keeps a PrimExpr's dtype in
    `.ty`), `arith` (0.27's `tvm.sym`), `tirx.stmt_functor` and its custom dtype
    (`DataType("custom[float4_e2m1_unpacked]8")`)."""
    tvm_module = sys.modules.get("tvm")
    if tvm_module is None or not hasattr(tvm_module, "ir") or not hasattr(tvm_module, "tirx"):
        return
    from ..language.dtypes import register_custom_dtypes
    from ..verify.testing import requires_package

    register_custom_dtypes()

    _add(tvm_module.tirx, "PrimExpr", tvm_module.ir.Expr)
    _add(tvm_module.tirx, "Call", tvm_module.ir.Call)  # 0.27 moved Call to tvm.ir as well
    _add(tvm_module, "TVMError", RuntimeError)  # 0.27's errors (tvm.error.InternalError, ...) are RuntimeErrors
    _add(importlib.import_module("tvm.testing"), "requires_package", requires_package)
    if not hasattr(tvm_module, "arith"):  # 0.27 renamed it tvm.sym
        _add(tvm_module, "arith", importlib.import_module("tvm.sym"))
        sys.modules["tvm.arith"] = tvm_module.arith
    if not hasattr(tvm_module.tirx, "stmt_functor"):
        from . import stmt_functor

        _add(tvm_module.tirx, "stmt_functor", stmt_functor)
        sys.modules["tvm.tirx.stmt_functor"] = stmt_functor
    _add(tvm_module.ir.Expr, "dtype", property(_expr_dtype))


def _expr_dtype(expr):
    """A typed expression's dtype, as TileLang's TVM gives `PrimExpr.dtype` (an AttributeError for other Exprs)."""
    return expr.ty.dtype


def _add(module, name: str, value) -> None:
    if not hasattr(module, name):
        setattr(module, name, value)
        setattr(module, _ADDED, getattr(module, _ADDED, ()) + (name,))


def unpatch_tvm() -> None:
    """Remove what `patch_tvm` added."""
    if getattr(sys.modules.get("tvm.tirx.stmt_functor"), "__name__", "").startswith("tilelang_core."):
        del sys.modules["tvm.tirx.stmt_functor"]
    if getattr(sys.modules.get("tvm.arith"), "__name__", "") == "tvm.sym":
        del sys.modules["tvm.arith"]
    expr = getattr(sys.modules.get("tvm.ir"), "Expr", None)
    for module in [sys.modules.get(name) for name in ("tvm", "tvm.tirx", "tvm.testing")] + [expr]:
        for name in getattr(module, _ADDED, ()):
            delattr(module, name)
        if hasattr(module, _ADDED):
            delattr(module, _ADDED)


class _PatchingLoader(importlib.abc.Loader):
    """Loads `tvm` with its own loader, then adds TileLang's names."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        patch_tvm()


def tvm_spec(fullname: str, path):
    """The spec of `tvm` with a loader that patches it, or None for any other module."""
    if fullname != "tvm":
        return None
    spec = importlib.machinery.PathFinder.find_spec(fullname, path)
    if spec is not None and spec.loader is not None:
        spec.loader = _PatchingLoader(spec.loader)
    return spec
