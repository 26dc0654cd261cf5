"""The records the CUDA emitter's stages share, each written by one owner and read by the others."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PipelineState:
    """Multi-buffered shared tiles (written by pipeline.py and overlap.py): their stage counts and current stage."""
    stages: dict = field(default_factory=dict)     # shared Buffer -> number of stages
    stage_idx: dict = field(default_factory=dict)  # shared Buffer -> stage index text while inside a pipeline


@dataclass
class FrameDeclarations:
    """What the kernel frame (frame.py) declares ahead of the body, added to by the stages that need it."""
    scratch: dict = field(default_factory=dict)  # name -> (dtype, elems): extra shared buffers
    allocs: list = field(default_factory=list)   # TVMScript lines declaring per-thread local buffers
