"""CUDA lowering of intrinsics with their own device code: IEEE arithmetic with a rounding mode (`__fadd_rz`,
...), vector atomics (`T.atomic_addx2/x4`), the reducer epoch (`T.finalize_reducer`, a warp-shuffle +
shared-memory all-reduce of the per-thread copies) and `T.print` (printf with block and thread indices).
"""
from __future__ import annotations

import json

from ...ir import nodes as N
from ...ir.arith import shape_ints
from ...ir.visitor import walk
from ...passes.layout_kinds import Generic, Mma, MmaRow, Replicated, in_fragment, ravel, unravel
from .common import LoweringError

_IEEE = {"ieee_add": ("fadd", "dadd"), "ieee_sub": ("fsub", "dsub"), "ieee_mul": ("fmul", "dmul"),
         "ieee_fmaf": ("fmaf", "fma"), "ieee_frcp": ("frcp", "drcp"), "ieee_fsqrt": ("fsqrt", "dsqrt"),
         "ieee_frsqrt": ("frsqrt", None), "ieee_fdiv": ("fdiv", "ddiv")}
# atomics read as their previous value (return_prev=True) -> the element dtypes the device library's tl::atomic_*
# returns it for (native atomics, or a compare-and-swap loop for floats without one: templates.py)
_MINMAX_DTYPES = ("int32", "uint32", "int64", "float32", "float16", "bfloat16")
_VALUE_ATOMICS = {"atomic_add": _MINMAX_DTYPES + ("float64",), "atomic_max": _MINMAX_DTYPES,
                  "atomic_min": _MINMAX_DTYPES, "atomic_or": ("int32", "uint32", "int64")}
STATEMENTS = ("atomic_addx2", "atomic_addx4", "finalize_reducer", "print", "print_buffer")

DEVICE_LIBRARY = r"""
namespace tl {
__device__ __forceinline__ void atomic_addx2(half* d, const half* s) {
  atomicAdd(reinterpret_cast<__half2*>(d), *reinterpret_cast<const __half2*>(s));
}
__device__ __forceinline__ void atomic_addx2(__nv_bfloat16* d, const __nv_bfloat16* s) {
  atomicAdd(reinterpret_cast<__nv_bfloat162*>(d), *reinterpret_cast<const __nv_bfloat162*>(s));
}
__device__ __forceinline__ void atomic_addx2(float* d, const float* s) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(d), *reinterpret_cast<const float2*>(s));
#else
  atomicAdd(d, s[0]); atomicAdd(d + 1, s[1]);
#endif
}
__device__ __forceinline__ void atomic_addx4(float* d, const float* s) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(d), *reinterpret_cast<const float4*>(s));
#else
  for (int i = 0; i < 4; ++i) atomicAdd(d + i, s[i]);
#endif
}
__device__ __forceinline__ void atomic_addx4(half* d, const half* s) { atomic_addx2(d, s); atomic_addx2(d + 2, s + 2); }
__device__ __forceinline__ void atomic_addx4(__nv_bfloat16* d, const __nv_bfloat16* s) {
  atomic_addx2(d, s); atomic_addx2(d + 2, s + 2);
}
__device__ __forceinline__ void atomic_addx2(int* d, const int* s) { atomicAdd(d, s[0]); atomicAdd(d + 1, s[1]); }
__device__ __forceinline__ void atomic_addx4(int* d, const int* s) { atomic_addx2(d, s); atomic_addx2(d + 2, s + 2); }
template <typename T> __device__ __forceinline__ double printable(T v) { return static_cast<double>(v); }
__device__ __forceinline__ double printable(half v) { return static_cast<double>(__half2float(v)); }
__device__ __forceinline__ double printable(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
#define TL_PRINT_WHERE "msg='%s' BlockIdx=(%d, %d, %d), ThreadIdx=(%d, %d, %d): "
#define TL_PRINT_IDS blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z
__device__ __forceinline__ void print_msg(const char* msg) { printf(TL_PRINT_WHERE "\n", msg, TL_PRINT_IDS); }
template <typename T> __device__ __forceinline__ void print_var(const char* msg, T v) {
  printf(TL_PRINT_WHERE "value=%g\n", msg, TL_PRINT_IDS, printable(v));
}
template <typename T> __device__ __forceinline__ void print_elem(const char* msg, const char* name, int i, T v) {
  printf(TL_PRINT_WHERE "buffer=%s, index=%d, value=%g\n", msg, TL_PRINT_IDS, name, i, printable(v));
}
template <typename T> __device__ __forceinline__ T bit_combine(T a, T b, int op) {
  return op == 3 ? (a & b) : op == 4 ? (a | b) : (a ^ b);
}
__device__ __forceinline__ half bit_combine(half a, half, int) { return a; }
__device__ __forceinline__ __nv_bfloat16 bit_combine(__nv_bfloat16 a, __nv_bfloat16, int) { return a; }
__device__ __forceinline__ float bit_combine(float a, float, int) { return a; }
__device__ __forceinline__ double bit_combine(double a, double, int) { return a; }
template <typename T> __device__ __forceinline__ T combine(T a, T b, int op) {
  return op == 0 ? a + b : op == 1 ? (b > a ? b : a) : op == 2 ? (b < a ? b : a) : bit_combine(a, b, op);
}
template <typename T> __device__ __forceinline__ T lanes_allreduce(T x, int op, int lanes) {
  for (int o = lanes / 2; o > 0; o /= 2) x = combine(x, __shfl_xor_sync(0xffffffffu, x, o), op);
  return x;
}
}  // namespace tl
"""


class IntrinsicOps:
    """Intrinsics with device code, emitted through a KernelEmitter `em`."""

    def __init__(self, em):
        self.em = em

    def library(self) -> None:
        """Add this module's device functions to the kernel (once)."""
        self.em.device_library.need(DEVICE_LIBRARY)

    def expr(self, exprs, e: N.Call) -> str | None:
        """`T.ieee_*` as the CUDA rounding-mode intrinsic, `T.atomic_add(..., return_prev=True)` as atomicAdd
        (its value is the previous one); None for other calls (an ExprEmitter hook)."""
        if e.name in _VALUE_ATOMICS and len(e.args) == 2 and isinstance(e.args[0], N.Load):
            return self._atomic_prev(exprs, e)
        if e.name == "__ldg":  # T.__ldg(x[i]): the read-only data cache load of the element
            load, em = e.args[0], self.em
            idx = em.access(load.buffer, [em.idx(i) for i in load.indices], load)
            ptr = f'{em.name(load.buffer)}.ptr_to([{", ".join(idx)}])'
            return f'T.call_pure_extern("{load.buffer.dtype}", "__ldg", {ptr})'
        base, mode = (e.name[:-3], e.name[-1]) if e.name.endswith(("_rz", "_ru", "_rd")) else (e.name, "n")
        if base not in _IEEE:
            return None
        dtype = e.dtype or "float32"
        wide = "float32" if dtype in ("float16", "bfloat16") else dtype  # 16-bit floats: in float32, rounded back
        fn = _IEEE[base][0 if wide == "float32" else 1] if wide in ("float32", "float64") else None
        if fn is None:
            raise LoweringError(f"T.{base} works on float values (float64 except frsqrt), not {dtype}", e.span)
        args = ", ".join(exprs.emit(a, wide) for a in e.args)
        call = f'T.call_pure_extern("{wide}", "__{fn}_r{mode}", {args})'
        return call if wide == dtype else f'T.Cast("{dtype}", {call})'

    def _atomic_prev(self, exprs, e: N.Call) -> str:
        """An atomic read as its previous value: the device library's tl::atomic_add / _max / _min / _or (an extern
        call, never pure: two identical atomics are two updates)."""
        em, (old, value) = self.em, e.args
        buf, dtypes = old.buffer, _VALUE_ATOMICS[e.name]
        if buf.scope not in ("global", "shared", "shared.dyn") or buf.dtype not in dtypes:
            raise LoweringError(f"T.{e.name}(..., return_prev=True) needs an element of global or shared memory of "
                                f"dtype {' / '.join(dtypes)} (got {buf.scope} {buf.dtype})", e.span)
        idx = em.access(buf, [em.idx(i) for i in old.indices], old)
        return (f'T.call_extern("{buf.dtype}", "tl::{e.name}", {em.name(buf)}.ptr_to([{", ".join(idx)}]), '
                f"{exprs.emit(value, buf.dtype)})")

    def statement(self, s: N.Evaluate) -> bool:
        """Emit an intrinsic statement (see STATEMENTS); False when `s` is not one."""
        call = s.value
        if not isinstance(call, N.Call) or call.name not in STATEMENTS:
            return False
        self.library()
        if call.name == "finalize_reducer":
            self.finalize_reducer(call)
        elif call.name == "print":
            self.print_value(call)
        elif call.name == "print_buffer":
            self.print_buffer(call)
        else:
            self.atomic_addx(call)
        return True

    def atomic_addx(self, call: N.Call) -> None:
        em = self.em
        dst, src = call.args
        width = int(call.name[-1])
        dtypes = ("float16", "bfloat16", "float32", "int32")
        if dst.buffer.dtype not in dtypes or src.buffer.dtype != dst.buffer.dtype:
            raise LoweringError(f"T.{call.name} adds {width} adjacent {' / '.join(dtypes)} elements; both sides "
                                f"must have that dtype (got {dst.buffer.dtype} and {src.buffer.dtype})", call.span)
        ptrs = []
        for load in (dst, src):
            if load.buffer.scope == "local.fragment":
                raise LoweringError(f"T.{call.name} reads {width} adjacent elements from memory; copy the fragment "
                                    f"'{load.buffer.name}' to shared memory or a T.alloc_local buffer first", call.span)
            idx = em.access(load.buffer, [em.idx(i) for i in load.indices], load)
            ptrs.append(f"{em.name(load.buffer)}.ptr_to([{', '.join(idx)}])")
        line = f'T.cuda.func_call("tl::{call.name}", {ptrs[0]}, {ptrs[1]}, source_code="")'
        if em.parallel_scope.owner:  # a replicated T.Parallel: one thread per iteration
            em.line(f"if {em.parallel_scope.owner}:")
            with em.block():
                em.line(line)
        else:
            em.line(line)

    def print_value(self, call: N.Call) -> None:
        """T.print(value, msg) or T.print(msg=...): every thread prints."""
        *value, msg = call.args
        if not value:
            return self.em.line(f'T.cuda.func_call("tl::print_msg", {_c_string(msg.value)}, source_code="")')
        self.em.line(f'T.cuda.func_call("tl::print_var", {_c_string(msg.value)}, {self.em.emit(value[0])}, '
                     'source_code="")')

    def print_buffer(self, call: N.Call) -> None:
        """T.print(buffer, msg): one thread prints every element (fragments gathered through shared memory)."""
        em = self.em
        head, msg, lane = call.args
        buf = head.buffer
        shape = shape_ints(buf.shape)
        if shape is None:
            raise LoweringError(f"T.print of '{buf.name}' needs its shape known at compile time", call.span)
        elems = 1
        for d in shape:
            elems *= d
        lay = em.plan.layouts.get(buf)
        source, flat = buf, True  # print buf[unravel(i)] (False: a flat scratch copy, print scratch[i])
        if buf.scope == "local.fragment" and not isinstance(lay, Replicated):
            source, flat = self._gather(buf, lay, elems), False
        i = em.fresh("i")
        printed = f"{source}[{i}]" if not flat else (
            f"{em.name(buf)}[{i}]" if buf.scope == "local.fragment" else em.load_text(buf, unravel(i, shape)))
        guard = buf.scope not in ("local", "local.var")  # per-thread buffers print on every thread
        with em.under([f"tx == {int(lane.value)}"] if guard else []):
            em.line(f"for {i} in T.serial({elems}):")
            with em.block():
                em.line(f'T.cuda.func_call("tl::print_elem", {_c_string(msg.value)}, "{buf.name}", {i}, {printed}, '
                        'source_code="")')
        if not flat:
            em.sync()

    def _gather(self, buf, lay, elems: int) -> str:
        """Copy a distributed fragment into a flat shared scratch (row-major); returns the scratch name."""
        em = self.em
        scratch = em.fresh(f"{buf.name}_print")
        em.frame.scratch[scratch] = (buf.dtype, elems)
        r = em.fresh("r")
        em.line(f"for {r} in T.serial({lay.regs}):")
        with em.block():
            em.guarded(in_fragment(lay, "tx", r),
                       f"{scratch}[{ravel(lay.coords('tx', r), list(shape_ints(buf.shape)))}] = {em.name(buf)}[{r}]")
        em.sync()
        return scratch

    def finalize_reducer(self, call: N.Call) -> None:
        """Combine the per-thread partial copies of a reducer fragment in place."""
        em = self.em
        buf = call.args[0].buffer
        op = int(call.args[1].value)
        lay = em.plan.layouts.get(buf)
        if isinstance(lay, (Generic, Mma)) or lay is None:
            return  # every element has one owner thread: nothing to combine
        _check_partial_updates(em, buf, call.span)
        name = em.name(buf)
        if isinstance(lay, MmaRow):  # the 4 lanes of a quad hold partials of the same rows
            r = em.fresh("r")
            em.line(f"for {r} in T.unroll({lay.regs}):")
            with em.block():
                em.line(f'{name}[{r}] = T.call_pure_extern("{buf.dtype}", "tl::lanes_allreduce", {name}[{r}], {op}, 4)')
            return
        if not isinstance(lay, Replicated):
            raise LoweringError(f"T.finalize_reducer cannot combine a reducer with layout {lay.describe()}", call.span)
        self._block_allreduce(buf, lay.regs, op)

    def _block_allreduce(self, buf, regs: int, op: int) -> None:
        em = self.em
        name, warps = em.name(buf), max(em.threads // 32, 1)
        scratch = em.fresh(f"{buf.name}_combine")
        em.frame.scratch[scratch] = (buf.dtype, warps * regs)
        r, w = em.fresh("r"), em.fresh("w")
        em.line(f"for {r} in T.serial({regs}):")
        with em.block():
            em.line(f'{name}[{r}] = T.call_pure_extern("{buf.dtype}", "tl::lanes_allreduce", {name}[{r}], {op}, 32)')
            em.line("if T.floormod(tx, 32) == 0:")
            with em.block():
                em.line(f"{scratch}[T.floordiv(tx, 32) * {regs} + {r}] = {name}[{r}]")
        em.sync()
        em.line(f"for {r} in T.serial({regs}):")
        with em.block():
            em.line(f"{name}[{r}] = {scratch}[{r}]")
            em.line(f"for {w} in T.serial(1, {warps}):")
            with em.block():
                em.line(f'{name}[{r}] = T.call_pure_extern("{buf.dtype}", "tl::combine", {name}[{r}], '
                        f'{scratch}[{w} * {regs} + {r}], {op})')
        em.sync()


def _c_string(text: str) -> str:
    """A TVMScript string whose characters form a C string literal body (TVM prints strings unescaped)."""
    return json.dumps(json.dumps(text)[1:-1])


def _check_partial_updates(em, buf, span) -> None:
    """Every store into a reducer must be in a T.Parallel loop (each iteration contributes to one thread's partial);
    a store outside one runs on every thread, and the combine would count it once per thread."""
    body = em.plan.func.body
    inside = {id(n) for loop in walk(body) if isinstance(loop, N.For) and loop.kind == "parallel"
              for n in walk(loop.body) if isinstance(n, N.Store)}
    bad = next((n for n in walk(body) if isinstance(n, N.Store) and n.buffer is buf and id(n) not in inside),
               None)
    if bad is not None:
        raise LoweringError(f"reducer '{buf.name}' is updated outside a T.Parallel loop, so every thread holds the "
                            "whole value and T.finalize_reducer would combine it once per thread; update it inside "
                            "a T.Parallel loop or drop T.finalize_reducer", bad.span or span)
