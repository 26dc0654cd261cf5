"""TVM's s_tir pipeline for CPU builds, registered again without CompactBufferAllocation.

Our CPU lowering sizes every buffer itself; the compaction pass only shrinks buffers by the regions it infers, and
it infers them wrongly where a tile op's index is read from a buffer (`A_s[stage[0], :, :]`): the compacted
buffer's offset then reads that buffer outside its allocation and the build fails ("Buffer stage is used before
its definition"), and unsigned conditions made it fail too ("cannot make uint from negative value").
"""
from __future__ import annotations

NAME = "tilelsp-cpu-s-tir"


def cpu_pipeline(tvm) -> str:
    """The name of the s_tir pipeline without CompactBufferAllocation (registered on first use)."""
    from tvm import s_tir, tirx

    if NAME in tirx.compilation_pipeline.PIPELINE_MAP:
        return NAME
    default = tirx.compilation_pipeline.PIPELINE_MAP["s_tir"]

    def factory(**kwargs):
        pipeline, host, device = default(**kwargs)

        @tvm.transform.module_pass(opt_level=0)
        def without_compaction(mod, _ctx):
            compact = s_tir.transform.CompactBufferAllocation
            s_tir.transform.CompactBufferAllocation = lambda *a, **k: tvm.transform.Sequential([])
            try:
                return pipeline(mod)
            finally:
                s_tir.transform.CompactBufferAllocation = compact
        return without_compaction, host, device

    tirx.compilation_pipeline.register_tir_pipeline(NAME, factory)
    return NAME
