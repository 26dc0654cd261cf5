"""A kernel built for the CPU: LLVM for this machine's processor, called with torch CPU tensors."""
from __future__ import annotations

from ...ir import nodes as N
from ..tvm_loader import load
from ..tvm_pipelines import s_tir_without_compaction
from .build import lowering_error, to_tir


class CpuModule:
    """A kernel built for the CPU: call it with torch CPU tensors (and scalars) in parameter order."""

    def __init__(self, func: N.PrimFunc, prim, executable):
        self.func = func
        self.name = func.name
        self.prim = prim
        self.executable = executable
        self._fn = executable[func.name]
        self._tir_text: str | None = None
        self._llvm_text: str | None = None

    @property
    def tir_text(self) -> str:
        """The TIR (TVMScript) of the lowered kernel."""
        if self._tir_text is None:
            self._tir_text = self.prim.script()
        return self._tir_text

    @property
    def llvm_ir(self) -> str:
        """The LLVM IR text of the built module."""
        if self._llvm_text is None:
            self._llvm_text = self.executable.mod.inspect_source("ll")
        return self._llvm_text

    def __call__(self, *args):
        """Run the kernel in place on the given tensors and scalars."""
        self._fn(*args)


def host_target() -> dict:
    """The LLVM target for this machine: x86 with AVX2/FMA/F16C gets mcpu=haswell (fast fp16/bf16 conversion)."""
    import platform

    target = {"kind": "llvm"}
    if platform.machine() in ("x86_64", "AMD64"):
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
                flags = next((ln.split(":", 1)[1].split() for ln in fh if ln.startswith("flags")), [])
        except OSError:
            flags = []
        if {"avx2", "fma", "f16c"} <= set(flags):
            target["mcpu"] = "haswell"
    return target


def build(func: N.PrimFunc) -> CpuModule:
    """Lower and build a kernel with LLVM for this CPU."""
    prim = to_tir(func)
    ns = load()
    try:
        target = ns.tvm.target.Target(host_target())
        no_tensors = not any(isinstance(p, N.Buffer) for p in func.params)
        ex = ns.tvm.compile(ns.tvm.IRModule({func.name: prim}), target=target,
                             tir_pipeline=s_tir_without_compaction(ns.tvm, no_tensor_args=no_tensors))
    except Exception as err:  # tvm raises its own error types from C++
        raise lowering_error(func, RuntimeError(f"LLVM build failed: {str(err).strip().splitlines()[-1][:300]}"),
                     "codegen-error") from None
    return CpuModule(func, prim, ex)
