"""CUDA lowering of iket events (`Call("iket_event", (id, name, kind, [payload]))`, frontend/iket.py): the lowest
active lane of each warp that reaches a marker appends one record to the module's trace buffer
`tl_iket_trace` (RECORD_WORDS uint32 words: %globaltimer low and high, event id | kind << 24, linear block index,
warp index in the block, 32-bit payload), counted by `tl_iket_count` (records past the capacity are counted and
dropped). The host reads both globals after a launch (runtime/iket_trace.py). `__iket_meta_info_<kernel>` holds
the kernel's event table as JSON, so a trace can be named from the source alone."""
from __future__ import annotations

import json

from ...ir import nodes as N

KINDS = {"mark": 0, "range_start": 1, "range_end": 2}
CAPACITY = 1 << 16
RECORD_WORDS = 6

DEVICE_LIBRARY = r"""
__device__ unsigned tl_iket_trace[%(capacity)d * %(words)d];
__device__ unsigned tl_iket_count;
namespace tl_iket {
__device__ __forceinline__ unsigned bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned bits(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned bits(unsigned v) { return v; }
__device__ __forceinline__ void event(unsigned id, unsigned kind, unsigned payload) {
  unsigned lane;
  asm volatile("mov.u32 %%0, %%%%laneid;" : "=r"(lane));
  if (lane != __ffs(__activemask()) - 1) return;  // one record per warp
  unsigned long long t;
  asm volatile("mov.u64 %%0, %%%%globaltimer;" : "=l"(t));
  unsigned slot = atomicAdd(&tl_iket_count, 1u);
  if (slot >= %(capacity)du) return;
  unsigned* r = tl_iket_trace + slot * %(words)du;
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  r[0] = static_cast<unsigned>(t); r[1] = static_cast<unsigned>(t >> 32); r[2] = id | (kind << 24);
  r[3] = block; r[4] = tid / 32; r[5] = payload;
}
}  // namespace tl_iket
#define TL_IKET_EVENT(id, kind, payload) tl_iket::event(id, kind, tl_iket::bits(payload))
""" % {"capacity": CAPACITY, "words": RECORD_WORDS}


def emit_event(em, call: N.Call, table: dict) -> None:
    """One marker: the TL_IKET_EVENT macro of the device library, the event in the kernel's meta table `table`
    (event id -> name, kind, payload type; the caller keeps one per kernel)."""
    event_id, name, kind = (a.value for a in call.args[:3])
    em.device_library.need(DEVICE_LIBRARY)
    old = _meta_info(em.plan.func.name, table) if table else None
    payload = call.args[3] if len(call.args) > 3 else None
    table[event_id] = {"name": name, "kind": kind, "payload_type": payload.dtype if payload is not None else None}
    em.device_library.renew(old, _meta_info(em.plan.func.name, table))
    value = em.emit(payload, payload.dtype) if payload is not None else "T.uint32(0)"
    em.line(f'T.cuda.func_call("TL_IKET_EVENT", {int(event_id)}, {KINDS[kind]}, {value}, source_code="")')


def _meta_info(kernel: str, table: dict) -> str:
    """`__iket_meta_info_<kernel>`: the kernel's event table as a JSON string."""
    text = json.dumps({str(k): v for k, v in sorted(table.items())}, separators=(",", ":"))
    return f"__device__ const char __iket_meta_info_{kernel}[] = {json.dumps(text)};\n"
