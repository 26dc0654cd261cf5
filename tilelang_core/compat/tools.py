"""`tilelang.tools`: layout plotting, the roofline Analyzer and the iket CUDA event tracer, none of which
tilelang_core provides; each raises UnsupportedFeatureError when called."""
from __future__ import annotations

from . import Unsupported, UnsupportedModule

__all__ = ["plot_layout", "Analyzer"]

plot_layout = Unsupported("tilelang.tools.plot_layout", "layout plotting needs TileLang's Layout objects; "
                          "print the layout with `tilelsp ir --stage layouts FILE` instead")
Analyzer = Unsupported("tilelang.tools.Analyzer", "use `tilelsp check` for shared-memory and register budgets")
cuda = UnsupportedModule("tilelang.tools.cuda", "iket in-kernel event tracing instruments TileLang's CUDA "
                         "codegen")
