"""The `tvm.tir.PrimFunc`-shaped view of a `@T.prim_func` at run time (what TileLang's PrimFunc lets a user read):
`attrs`, `params`, `buffer_map`, `body` and `script()`, all from one parse of the captured function."""
from __future__ import annotations

from types import MappingProxyType

from ..diagnostics import CompileError, DiagnosticSink
from ..ir import nodes as N
from ..ir.printer import print_func
from . import parse_captured


class PrimFuncSurface:
    """The parsed kernel of a PrimFuncDef, read through TileLang's PrimFunc names."""

    def __init__(self, func: N.PrimFunc):
        self.func = func

    @property
    def params(self) -> list:
        """Parameters in call order (Buffers and Vars)."""
        return list(self.func.params)

    @property
    def buffer_map(self) -> dict:
        """Each tensor parameter to its Buffer; in the tile IR a tensor parameter is its Buffer."""
        return {p: p for p in self.func.params if isinstance(p, N.Buffer)}

    @property
    def body(self):
        """The kernel body (a tile-IR statement)."""
        return self.func.body

    @property
    def attrs(self):
        """A read-only mapping of TileLang's attribute names to their values (see PrimFuncDef.attrs)."""
        out: dict = {"global_symbol": self.func.name}
        n = len(self.func.params)
        if self.func.out_idx:  # parsed without a caller's out_idx: these are its returned T.empty tensors
            out["tilelang_out_idx"] = [i - n if i >= 0 else i for i in self.func.out_idx]
        if self.func.pass_configs:
            out["tilelang_pass_configs"] = dict(self.func.pass_configs)
        if self.func.compile_flags:
            out["tilelang_compile_flags"] = list(self.func.compile_flags)
        return MappingProxyType(out)

    def script(self) -> str:
        """TileLang-style Python text of the kernel."""
        return print_func(self.func)


def surface_of(defn) -> PrimFuncSurface:
    """Parse a PrimFuncDef's captured function (live mode) into its view; CompileError when it has errors."""
    sink = DiagnosticSink()
    func = parse_captured(defn.captured, sink)
    errors = [d for d in sink.items if d.is_error]
    if errors or func is None:
        raise CompileError(errors or sink.items, defn.captured.filename)
    return PrimFuncSurface(func)
