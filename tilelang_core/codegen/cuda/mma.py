"""CUDA lowering of `T.ptx_mma`: one warp-wide `mma.sync.aligned` (sm_80 and newer, every target of this backend) on the threads' own registers (their
T.alloc_local arrays at the given offsets), through a small device function per shape and operand type."""
from __future__ import annotations

from ...ir import nodes as N

_PTX_TYPE = {"fp16": "f16", "bf16": "bf16", "int8": "s8", "uint8": "u8", "fp32": "f32", "int32": "s32"}


def _function(shape: str, a: str, c: str) -> str:
    """The device function for one (shape, operand type, accumulator type)."""
    name = f"mma_{shape}_{a}_{c}"
    types = f"{_PTX_TYPE[c]}.{_PTX_TYPE[a]}.{_PTX_TYPE[a]}.{_PTX_TYPE[c]}"
    if c == "fp16":  # two registers of packed halves
        acc, regs, ops = "unsigned* C = reinterpret_cast<unsigned*>(c);", "{%0,%1}", '"+r"(C[0]), "+r"(C[1])'
        a_regs, b_regs = "{%2,%3,%4,%5}", "{%6,%7}"
    else:
        kind = '"+f"' if c == "fp32" else '"+r"'
        cast = "float" if c == "fp32" else "int"
        acc = f"{cast}* C = reinterpret_cast<{cast}*>(c);"
        regs, ops = "{%0,%1,%2,%3}", ", ".join(f"{kind}(C[{i}])" for i in range(4))
        a_regs, b_regs = "{%4,%5,%6,%7}", "{%8,%9}"
    return (f"__device__ __forceinline__ void {name}(const void* a, const void* b, void* c) {{\n"
            f"  const unsigned* A = reinterpret_cast<const unsigned*>(a);\n"
            f"  const unsigned* B = reinterpret_cast<const unsigned*>(b);\n  {acc}\n"
            f'  asm volatile("mma.sync.aligned.{shape}.row.col.{types} {regs}, {a_regs}, {b_regs}, {regs};"\n'
            f'               : {ops}\n'
            f'               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));\n'
            f"}}\n")


def emit_mma(em, call: N.Call) -> None:
    """`T.ptx_mma`: Call("ptx_mma", (shape, a_type, c_type, A head, B head, C head)) as a device call."""
    shape, a_type, c_type = (arg.value for arg in call.args[:3])
    heads = call.args[3:]
    code = "namespace tl {\n" + _function(shape, a_type, c_type) + "}  // namespace tl\n"
    if code not in em.extra_cuda:
        em.extra_cuda.append(code)
    ptrs = []
    for load in heads:
        idx = em.access(load.buffer, [em.idx(i) for i in load.indices], load)
        ptrs.append(f"{em.name(load.buffer)}.ptr_to([{', '.join(idx)}])")
    em.line(f'T.cuda.func_call("tl::mma_{shape}_{a_type}_{c_type}", {", ".join(ptrs)}, source_code="")')
