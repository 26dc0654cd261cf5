"""TVM compilation pipelines registered again with one pass left out (both backends use this; TVM 0.27 has no
switch for the passes we drop: the CSE switch reads a config key it never registers, compaction has none).

- "tilelsp-tirx-no-cse": the "tirx" pipeline without CommonSubexprElim (CUDA kernels that read a hoisted value).
- "tilelsp-cpu-s-tir": the "s_tir" pipeline without CompactBufferAllocation (CPU builds: our lowering sizes every
  buffer itself, and compaction mis-sized a tile indexed by a loaded value, `A_s[slot[0], :, :]`, reading `slot`
  outside its scope, and crashed on unsigned conditions).
"""
from __future__ import annotations


def tirx_without_cse(tvm) -> str:
    """The name of the "tirx" pipeline without CommonSubexprElim (registered on first use)."""
    from tvm import tirx

    return _without(tvm, "tirx", tirx.transform, "CommonSubexprElim", "tilelsp-tirx-no-cse")


def s_tir_without_compaction(tvm) -> str:
    """The name of the "s_tir" pipeline without CompactBufferAllocation (registered on first use)."""
    from tvm import s_tir

    return _without(tvm, "s_tir", s_tir.transform, "CompactBufferAllocation", "tilelsp-cpu-s-tir")


def _without(tvm, base: str, namespace, pass_name: str, name: str) -> str:
    """Register `name`: pipeline `base` run with `namespace.pass_name` replaced by an empty pass."""
    from tvm import tirx

    registry = tirx.compilation_pipeline.PIPELINE_MAP
    if name in registry:
        return name
    default = registry[base]

    def factory(**kwargs):
        pipeline, host, device = default(**kwargs)

        @tvm.transform.module_pass(opt_level=0)
        def without(mod, _ctx):
            kept = getattr(namespace, pass_name)
            setattr(namespace, pass_name, lambda *a, **k: tvm.transform.Sequential([]))
            try:
                return pipeline(mod)
            finally:
                setattr(namespace, pass_name, kept)
        return without, host, device

    tirx.compilation_pipeline.register_tir_pipeline(name, factory)
    return name
