"""TVM compilation pipelines registered again with one pass left out (both backends use this; TVM 0.27 has no
switch for the passes we drop: the CSE switch reads a config key it never registers, compaction has none).

- "tilelsp-tirx-no-cse": the "tirx" pipeline without CommonSubexprElim (CUDA kernels that read a hoisted value).
- "tilelsp-cpu-s-tir": the "s_tir" pipeline without CompactBufferAllocation (CPU builds: our lowering sizes every
  buffer itself, and compaction mis-sized a tile indexed by a loaded value, `A_s[slot[0], :, :]`, reading `slot`
  outside its scope, and crashed on unsigned conditions); "tilelsp-cpu-s-tir-no-tensors" the same for a kernel
  without tensor arguments, whose host passes first give it the CPU as its device.
"""
from __future__ import annotations


def tirx_without_cse(tvm) -> str:
    """The name of the "tirx" pipeline without CommonSubexprElim (registered on first use)."""
    from tvm import tirx

    return _without(tvm, "tirx", tirx.transform, "CommonSubexprElim", "tilelsp-tirx-no-cse")


def s_tir_without_compaction(tvm, no_tensor_args: bool = False) -> str:
    """The name of the "s_tir" pipeline without CompactBufferAllocation (registered on first use); for a function
    without tensor arguments (`no_tensor_args`) its host passes first give the function the CPU as its device."""
    from tvm import s_tir

    if not no_tensor_args:
        return _without(tvm, "s_tir", s_tir.transform, "CompactBufferAllocation", "tilelsp-cpu-s-tir")
    return _without(tvm, "s_tir", s_tir.transform, "CompactBufferAllocation", "tilelsp-cpu-s-tir-no-tensors",
                    host_first=_cpu_device_attrs(tvm))


def _cpu_device_attrs(tvm):
    """A pass wrapping each function body in device_type = CPU, device_id = 0: TVM takes them from a tensor
    argument, and a heap allocation in a function without one failed "Unknown device id in current IR"."""
    from tvm import tirx

    @tirx.transform.prim_func_pass(opt_level=0)
    def cpu_device(func, _mod, _ctx):
        here = tvm.ir.StringImm("default")
        body = tirx.AttrStmt(here, "device_type", tirx.const(1, "int32"), func.body)  # kDLCPU
        return func.with_body(tirx.AttrStmt(here, "device_id", tirx.const(0, "int32"), body))

    return cpu_device


def _without(tvm, base: str, namespace, pass_name: str, name: str, host_first=None) -> str:
    """Register `name`: pipeline `base` run with `namespace.pass_name` replaced by an empty pass (and `host_first`,
    when given, run before the host finalisation passes)."""
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
        if host_first is None:
            return without, host, device
        return without, lambda: tvm.transform.Sequential([host_first, host()]), device

    tirx.compilation_pipeline.register_tir_pipeline(name, factory)
    return name
