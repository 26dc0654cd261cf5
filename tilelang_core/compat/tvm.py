"""`tilelang.tvm` and `tilelang.DataType`: the installed apache-tvm 0.27, imported on first use.

Why the real package and not a small stand-in: TileLang puts its bundled TVM on `sys.path`, so files that do
`from tilelang import tvm` go on to `from tvm import DataType` / `from tvm import tirx` — plain imports that
a stand-in object cannot answer, and that must reach the one tvm our code generators use. The corpus reads
`DataType(dtype).bits`, `tvm.target.Target(...)`, `tvm.tirx.const` and names `tirx.PrimExpr` in annotations;
0.27 has all of these except `tirx.PrimExpr` (it merged PrimExpr into `tvm.ir.Expr`), which `patch_tirx` adds
while the alias is installed. The import costs one to a few seconds, paid only by files that touch tvm (the
JIT imports it to compile anyway); `import tilelang` alone stays free of it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

_ADDED = "__tilelang_core_primexpr__"


def tvm():
    """The tvm module (imported now if needed), with TileLang's `tirx.PrimExpr`."""
    module = importlib.import_module("tvm")
    patch_tirx()
    return module


def DataType(*args, **kwargs):  # noqa: N802 -- TileLang's name
    """`tvm.DataType`: DataType("float16").bits == 16."""
    return tvm().DataType(*args, **kwargs)


def patch_tirx() -> None:
    """Give an imported `tvm.tirx` TileLang's `PrimExpr` name (0.27's `tvm.ir.Expr`)."""
    tirx = sys.modules.get("tvm.tirx")
    ir = sys.modules.get("tvm.ir")
    if tirx is not None and ir is not None and not hasattr(tirx, "PrimExpr"):
        tirx.PrimExpr = ir.Expr
        setattr(tirx, _ADDED, True)


def unpatch_tirx() -> None:
    """Remove what `patch_tirx` added."""
    tirx = sys.modules.get("tvm.tirx")
    if tirx is not None and getattr(tirx, _ADDED, False):
        del tirx.PrimExpr
        delattr(tirx, _ADDED)


class _PatchingLoader(importlib.abc.Loader):
    """Loads `tvm.tirx` with its own loader, then adds `PrimExpr`."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        patch_tirx()


def tirx_spec(fullname: str, path):
    """The spec of `tvm.tirx` with a loader that patches it, or None for any other module."""
    if fullname != "tvm.tirx":
        return None
    spec = importlib.machinery.PathFinder.find_spec(fullname, path)
    if spec is not None and spec.loader is not None:
        spec.loader = _PatchingLoader(spec.loader)
    return spec
