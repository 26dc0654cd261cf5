"""Host side of iket tracing: after a launch of an instrumented kernel (its source defines `tl_iket_trace`,
codegen/cuda/iket.py) read the records back, name them from the source's `__iket_meta_info_<kernel>` tables,
reset the buffer, and append the launch to `<kernel>.trace.json` in the iket output directory
(`TL_IKET_OUTPUT_DIR`, set by `iket.session(output_dir=...)`); the last launches are also kept in `LAUNCHES`."""
from __future__ import annotations

import ctypes
import json
import os
import re
import struct
from pathlib import Path

from .driver_call import checked

RECORD_WORDS = 6  # matches codegen/cuda/iket.py
KINDS = ("mark", "range_start", "range_end")
LAUNCHES: list = []  # the decoded launches of this process, newest last (at most 64 kept)
_META = re.compile(r'__iket_meta_info_(\w+)\[\] = ("(?:[^"\\]|\\.)*");')


def is_instrumented(source: str) -> bool:
    """Whether a kernel source writes iket records."""
    return "tl_iket_count" in source


def event_names(source: str) -> dict[int, tuple[str, str, str | None]]:
    """Event id -> (name, kind, payload type), from the source's meta tables."""
    names = {}
    for _, literal in _META.findall(source):
        for key, ev in json.loads(json.loads(literal)).items():
            names[int(key)] = (ev["name"], ev["kind"], ev["payload_type"])
    return names


def decode_records(words, count: int, names: dict, payloads: bool = True) -> dict:
    """One launch's trace from `count` records of RECORD_WORDS uint32 words: markers, and ranges (a range_start
    matched with the next range_end of the same block and warp); times in ns from the first record."""
    recs = []
    for i in range(min(count, len(words) // RECORD_WORDS)):
        lo, hi, ev, block, warp, bits = (int(w) & 0xFFFFFFFF for w in words[i * RECORD_WORDS:(i + 1) * RECORD_WORDS])
        recs.append(((hi << 32) | lo, ev & 0xFFFFFF, block, warp, bits))
    t0 = min((r[0] for r in recs), default=0)
    markers, ranges, open_ranges = [], [], {}
    for t, ev, block, warp, bits in sorted(recs):
        name, kind, ptype = names.get(ev, (f"event{ev}", "mark", None))
        entry = {"name": name, "ts": t - t0, "block": block, "warp": warp}
        if ptype is not None and payloads:
            entry["payloadVal"] = struct.unpack("<f", struct.pack("<I", bits))[0] if ptype == "float32" else \
                (bits - (1 << 32) if ptype == "int32" and bits >= 1 << 31 else bits)
        if kind == "range_start":
            open_ranges.setdefault((block, warp), []).append(entry)
        elif kind == "range_end" and open_ranges.get((block, warp)):
            start = open_ranges[(block, warp)].pop()
            ranges.append({**start, "dur": t - t0 - start["ts"]})
        elif kind == "mark":
            markers.append(entry)
    return {"markers": markers, "ranges": ranges, "records": len(recs), "dropped": max(0, count - len(recs))}


def _global(module, name: bytes):
    """(device pointer, bytes) of a module global."""
    from cuda.bindings import driver as cu

    err, ptr, size = cu.cuModuleGetGlobal(module, name)
    checked(err)
    return ptr, int(size)


def collect(artifact, module, stream) -> dict:
    """Read back and reset the trace buffer of `module` after a launch on `stream`; returns the decoded launch."""
    from cuda.bindings import driver as cu

    checked(cu.cuStreamSynchronize(cu.CUstream(stream.cuda_stream)))
    count_ptr, trace_ptr, trace_bytes = _global(module, b"tl_iket_count")[0], *_global(module, b"tl_iket_trace")
    count = ctypes.c_uint32()
    checked(cu.cuMemcpyDtoH(ctypes.addressof(count), count_ptr, 4))
    n = min(count.value * RECORD_WORDS, trace_bytes // 4)
    words = (ctypes.c_uint32 * max(n, 1))()
    if n:
        checked(cu.cuMemcpyDtoH(ctypes.addressof(words), trace_ptr, n * 4))
    checked(cu.cuMemsetD32(count_ptr, 0, 1))
    payloads = os.environ.get("TL_IKET_RUNTIME_PAYLOADS", "0") == "1"  # iket.session(runtime_payloads=True)
    launch = {"kernel": artifact.name, **decode_records(list(words)[:n], count.value, event_names(artifact.source),
                                                        payloads)}
    LAUNCHES.append(launch)
    del LAUNCHES[:-64]
    out = os.environ.get("TL_IKET_OUTPUT_DIR")
    if out:
        path = Path(out) / f"{artifact.name}.trace.json"
        old = json.loads(path.read_text()) if path.exists() else {"kernel": artifact.name, "launches": []}
        old["launches"].append(launch)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(old, indent=1))
    return launch
