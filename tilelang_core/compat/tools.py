"""`tilelang.tools`: the roofline Analyzer (tools_analyzer.py); layout plotting and the iket CUDA event tracer,
which tilelang_core does not provide, raise UnsupportedFeatureError when called."""
from __future__ import annotations

from . import Unsupported
from .tools_analyzer import AnalysisResult, Analyzer

__all__ = ["plot_layout", "Analyzer", "AnalysisResult"]

plot_layout = Unsupported("tilelang.tools.plot_layout", "layout plotting needs TileLang's Layout objects; "
                          "print the layout with `tilelsp ir --stage layouts FILE` instead")


def __getattr__(name: str):
    """`tilelang.tools.cuda` (the iket tracer), imported on first use."""
    if name == "cuda":
        from . import tools_cuda

        return tools_cuda
    raise AttributeError(name)
