"""Hopper (sm_90a) wgmma gemm: per-kernel CUDA functions with shared-memory descriptors.

A and B live in shared memory in the canonical layouts of `passes.plan.shared_layouts` ("rows": 32/64/128-byte
rows, XOR-swizzled; "atoms": [cols/w][rows][w] with the 128-byte swizzle, w = 64 fp16 or 128 fp8 columns).
Warpgroups split M; each issues m64nNk16 (fp16/bf16) or m64nNk32 (fp8 e4m3/e5m2, both operands K-major in shared
memory) instructions, one per 32 bytes of K; the accumulator layout is `Mma(..., interleave=True)`.
"""
from __future__ import annotations

_MODE = {128: 1, 64: 2, 32: 3}

DESC = r"""
namespace tl {
__device__ __forceinline__ unsigned long long wg_desc(const void* p, int lbo, int sbo, int mode) {
  unsigned long long a = static_cast<unsigned long long>(smem_u32(p) & 0x3FFFF) >> 4;
  return a | (static_cast<unsigned long long>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<unsigned long long>((sbo >> 4) & 0x3FFF) << 32) | (static_cast<unsigned long long>(mode) << 62);
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  __syncthreads();
}
}  // namespace tl
"""


# Emitted only with a wgmma group left in flight: the accumulators are pinned (an empty asm that "reads and writes"
# each) after the wait, so no compiler pass moves or reads them while a wgmma still writes them (CUTLASS's
# warpgroup_fence_operand).
IN_FLIGHT = r"""
namespace tl {
template <int N, int R>
__device__ __forceinline__ void wgmma_wait_fenced(float* d) {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
}  // namespace tl
"""


_PTX = {"float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "e4m3", "float8_e4m3": "e4m3", "float8_e5m2": "e5m2"}
_CTYPE = {"float16": "half", "bfloat16": "__nv_bfloat16", "float8_e4m3fn": "__nv_fp8_e4m3",
          "float8_e4m3": "__nv_fp8_e4m3", "float8_e5m2": "__nv_fp8_e5m2"}


def _esize(dtype: str) -> int:
    return 2 if dtype in ("float16", "bfloat16") else 1


def instruction(n: int, dtype: str, rs: bool, tnsp_b: int, b_dtype: str | None = None) -> tuple[str, str]:
    """(function name, CUDA text) of one wgmma wrapper: m64nNk16 for fp16/bf16, m64nNk32 for fp8 (A and B may be
    e4m3 and e5m2; fp8 has no transpose immediates: both operands are K-major)."""
    ta, tb = _PTX[dtype], _PTX[b_dtype or dtype]
    fp8 = _esize(dtype) == 1
    kdim = 32 if fp8 else 16
    name = f"tl_wgmma_{'rs' if rs else 'ss'}_n{n}_{ta}{'' if tb == ta else tb}_t{tnsp_b}"
    nd = n // 2
    dregs = ", ".join(f"%{i}" for i in range(nd))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(nd))
    if rs:
        a_ops, ins = f"{{%{nd}, %{nd + 1}, %{nd + 2}, %{nd + 3}}}", '"r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1)'
        b_op, p_op, tail = f"%{nd + 4}", f"%{nd + 5}", f"p, 1, 1, {tnsp_b}"
        params = "float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long db"
    else:
        a_ops, ins = f"%{nd}", '"l"(da), "l"(db), "r"(1)'
        b_op, p_op, tail = f"%{nd + 1}", f"%{nd + 2}", "p, 1, 1" if fp8 else f"p, 1, 1, 0, {tnsp_b}"
        params = "float* d, unsigned long long da, unsigned long long db"
    text = (f"__device__ __forceinline__ void {name}({params}) {{\n"
            f'  asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, {p_op}, 0;\\n"\n'
            f'    "wgmma.mma_async.sync.aligned.m64n{n}k{kdim}.f32.{ta}.{tb} {{{dregs}}}, {a_ops}, {b_op}, {tail};\\n}}\\n"\n'
            f"    : {outs}\n    : {ins});\n}}\n")
    return name, text


def _operand(kind: str, rows: int, cols: int, esize: int, kmajor: bool) -> dict:
    """Descriptor constants and offset expressions (bytes; `row0`, `kk` are C++ names, kk counting 32-byte K steps)
    of one operand with `esize`-byte elements."""
    if kind == "atoms":
        if kmajor:
            off = f"(kk * 32 / 128) * {rows * 128} + row0 * 128 + (kk * 32 % 128)"
            return {"off": off, "lbo": 16, "sbo": 1024, "mode": 1}
        return {"off": "kk * 16 * 128", "lbo": rows * 128, "sbo": 1024, "mode": 1}
    rowbytes = cols * esize
    return {"off": f"row0 * {rowbytes} + kk * 32", "lbo": 16, "sbo": 8 * rowbytes, "mode": _MODE[rowbytes]}


def gemm_function(ident: int, g, m: int, n: int, k: int, n_wg: int, layouts: dict,
                  wait: bool = True, first: int = 0) -> tuple[str, list[str]]:
    """(function name, [CUDA texts]) for one wgmma gemm; A from shared memory or registers.

    With wait=False the committed group stays in flight (the caller waits with tl::wgmma_wait<N>). `first`: the
    first thread of the warp groups that run it (a thread role's)."""
    from ...ir.arith import shape_ints

    a, b = g.a.buffer, g.b.buffer
    rs = a.scope == "local.fragment"
    tnsp_b = 0 if g.transpose_b else 1
    inst, inst_text = instruction(n, a.dtype, rs, tnsp_b, b.dtype)
    brows, bcols = shape_ints(b.shape)[-2:]
    bop = _operand(layouts[b], brows, bcols, _esize(b.dtype), kmajor=bool(g.transpose_b))
    aop = None if rs else _operand(layouts[a], *shape_ints(a.shape)[-2:], _esize(a.dtype), kmajor=True)
    t, tb = _CTYPE[a.dtype], _CTYPE[b.dtype]
    ksteps = k * _esize(a.dtype) // 32  # one instruction per 32 bytes of K (k16 fp16, k32 fp8)
    name = f"tl_gemm_wgmma_{ident}"
    mi = m // (64 * n_wg)
    tid = f"(threadIdx.x - {first})" if first else "threadIdx.x"
    body = [f"__device__ __forceinline__ void {name}(const {t}* A, const {tb}* B, float* C) {{",
            # A's rows (registers need none); the shuffle tells ptxas the warpgroup is warp-uniform, so the
            # descriptors live in uniform registers (as CUTLASS's canonical_warp_group_idx)
            *([] if rs else [f"  const int wg = __shfl_sync(0xffffffffu, {tid} / 128 % {n_wg}, 0);"]),
            *([] if wait else ["#pragma unroll", f"  for (int i = 0; i < {mi * n // 2}; ++i) "
                               'asm volatile("" : "+f"(C[i])::"memory");']),  # pinned while a group is in flight
            '  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");',
            # each instruction's descriptor: the operand's base descriptor plus its byte offset in 16-byte units (the
            # start address field's units; shared addresses stay below 2^18, so the add never carries out of it)
            f"  const unsigned long long db0 = tl::wg_desc(B, {bop['lbo']}, {bop['sbo']}, {bop['mode']});",
            *([] if rs else [f"  const unsigned long long da0 = tl::wg_desc(A, {aop['lbo']}, {aop['sbo']}, "
                             f"{aop['mode']});"]),
            "#pragma unroll", f"  for (int mi = 0; mi < {mi}; ++mi) {{",
            *([] if rs else [f"    const int row0 = (mi * {n_wg} + wg) * 64;"]),
            "#pragma unroll", f"    for (int kk = 0; kk < {ksteps}; ++kk) {{",
            f"      unsigned long long db = db0 + (({bop['off'].replace('row0', '0')}) >> 4);"]
    if rs:
        body += [f"      const unsigned* a = reinterpret_cast<const unsigned*>(A) + (mi * {k // 8} + 2 * kk) * 2;",
                 f"      {inst}(C + mi * {n // 2}, a[0], a[1], a[2], a[3], db);"]
    else:
        body += [f"      unsigned long long da = da0 + (({aop['off']}) >> 4);",
                 f"      {inst}(C + mi * {n // 2}, da, db);"]
    body += ["    }", "  }", '  asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");']
    if wait:
        body.append('  asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");')
    body.append("}")
    return name, [inst_text, "\n".join(body) + "\n", *([] if wait else [IN_FLIGHT])]
