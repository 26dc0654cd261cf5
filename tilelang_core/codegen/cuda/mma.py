"""CUDA lowering of the tensor-core emitter's intrinsics: `T.mma_fragment_load` as one ldmatrix per tile, and
`T.ptx_mma` as one warp-wide `mma.sync.aligned` (sm_80 and newer, every target of this backend) on the threads'
own registers (their T.alloc_local arrays at the given offsets), each through a small device function."""
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
    em.device_library.need(code)
    ptrs = []
    for load in heads:
        idx = em.access(load.buffer, [em.idx(i) for i in load.indices], load)
        ptrs.append(f"{em.name(load.buffer)}.ptr_to([{', '.join(idx)}])")
    em.line(f'T.cuda.func_call("tl::mma_{shape}_{a_type}_{c_type}", {", ".join(ptrs)}, source_code="")')


_LDSM = r"""namespace tl {
__device__ __forceinline__ void ldsm_%(name)s(void* d, const void* s) {
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));
  unsigned* r = reinterpret_cast<unsigned*>(d);
  asm volatile("ldmatrix.sync.aligned.m8n8.x%(num)d%(trans)s.shared.b16 %(regs)s, [%%%(num)d];"
               : %(outs)s : "r"(a));
}
}  // namespace tl
"""


def _ldsm(num: int, trans: bool) -> tuple[str, str]:
    """(function name, device code) of one ldmatrix variant."""
    name = f"x{num}{'_trans' if trans else ''}"
    regs = "{" + ",".join(f"%{i}" for i in range(num)) + "}"
    outs = ", ".join(f'"=r"(r[{i}])' for i in range(num))
    return f"tl::ldsm_{name}", _LDSM % {"name": name, "num": num, "trans": ".trans" if trans else "", "regs": regs,
                                        "outs": outs}


def emit_fragment_load(em, call: N.Call) -> None:
    """`T.mma_fragment_load`: one ldmatrix (x4, or x2 for an 8-column B tile; .trans for a tile stored (K, rows))
    when the element type and the layout allow it, else the thread's registers loaded one by one."""
    dst, src = call.args[:2]
    matrix, transposed, e, size = (a.value for a in call.args[2:])
    bits = 32 // e
    origin = [em.idx(i) for i in src.indices]
    *lead, o_row, o_col = origin
    num = size // e
    dst_ptr = f"{em.name(dst.buffer)}.ptr_to([{', '.join(em.access(dst.buffer, [em.idx(dst.indices[0])], dst))}])"
    if (bits == 16 or not transposed) and src.buffer not in em.parallel_scope.staged and num in (2, 4):
        j = f"T.floordiv(T.floormod(tx, {8 * num}), 8)"
        i = "T.floormod(tx, 8)"
        row_block, k_block = (f"T.floormod({j}, 2)", f"T.floordiv({j}, 2)") if matrix == "a" else \
            (f"T.floordiv({j}, 2)", f"T.floormod({j}, 2)")
        if num == 2:  # one 8-row block: the two matrices are the K halves
            row_block, k_block = "0", j
        # lane l gives the address of row l % 8 of matrix j (register j): (rows, K) stored, or (K, rows) with .trans
        at = [f"{o_row} + 8 * {k_block} + {i}", f"{o_col} + 8 * {row_block}"] if transposed else \
            [f"{o_row} + 8 * {row_block} + {i}", f"{o_col} + {4 * e} * {k_block}"]
        fn, code = _ldsm(num, transposed)
        em.device_library.need(code)
        src_ptr = f"{em.name(src.buffer)}.ptr_to([{', '.join(em.access(src.buffer, lead + at, src))}])"
        em.line(f'T.cuda.func_call("{fn}", {dst_ptr}, {src_ptr}, source_code="")')
        return
    v = em.fresh("v")
    q = f"T.floordiv({v}, {e})"
    row_block, k_block = (f"T.floormod({q}, 2)", f"T.floordiv({q}, 2)") if matrix == "a" else \
        (f"T.floordiv({q}, 2)", f"T.floormod({q}, 2)")
    row = f"T.floordiv(T.floormod(tx, 32), 4) + 8 * {row_block}"
    col = f"T.floormod(tx, 4) * {e} + T.floormod({v}, {e}) + {4 * e} * {k_block}"
    at = [f"{o_row} + {col}", f"{o_col} + {row}"] if transposed else [f"{o_row} + {row}", f"{o_col} + {col}"]
    em.line(f"for {v} in T.unroll({size}):")
    with em.block():
        target = em.load_text(dst.buffer, [f"{em.idx(dst.indices[0])} + {v}"], dst)
        em.line(f"{target} = {em.load_text(src.buffer, lead + at, src)}")
