"""TVM's CUDA output made fit to ship: nvcc-quiet text, kernel signatures without the `cse_v*` scalars TVM hoisted
out of a kernel, the device library inserted and line markers turned into comments (with the line map), and what
the lowering reads back from the text (kernel symbols and signatures, TVM's error lines)."""
from __future__ import annotations

import re

from .templates import insert_prelude
from .wgmma import DESC

_CSE_DECL = re.compile(r"^\s*[\w:]+ (cse_v\d+) = [^;]*;\n", re.M)
_HEX_FLOAT = re.compile(r"\b0x([0-9a-fA-F])\.([0-9a-fA-F]+)p([-+]?\d+)f\b")


def quiet_source(raw: str) -> str:
    """TVM's CUDA without what nvcc warns about: unused `cse_v*` declarations (their uses were inlined), float
    literals with more digits than a float holds (rounded to the float nvcc would make of them), and its unused
    static half-precision helpers (marked maybe-unused)."""
    import struct

    names = set(re.findall(r"\bcse_v\d+\b", raw))
    used = {n for n in names if len(re.findall(rf"\b{n}\b", raw)) > 1}
    raw = _CSE_DECL.sub(lambda m: m.group(0) if m.group(1) in used else "", raw)

    def to_float(m) -> str:
        mantissa, exponent = struct.unpack("f", struct.pack("f", float.fromhex(m.group(0)[:-1])))[0].hex().split("p")
        return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"
    raw = _HEX_FLOAT.sub(to_float, raw)
    return raw.replace("static inline __device__ __host__", "[[maybe_unused]] static inline __device__ __host__")


_KERNEL_DEF = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\([\d, ]+\) )?(\w+)\(([^)]*)\) \{')


def clean_source(raw: str) -> str:
    """TVM's CUDA text nvcc-quiet and without unread `cse_v*` parameters."""
    return drop_unused_params(quiet_source(raw))


def host_made_params(cleaned: str) -> bool:
    """True when a kernel signature of cleaned CUDA text (`clean_source`) still has a `cse_v*` parameter: one its
    body reads."""
    return any(re.search(r"\bcse_v\d+\b", m.group(2)) for m in _KERNEL_DEF.finditer(cleaned))


def drop_unused_params(raw: str) -> str:
    """Remove from each kernel's signature (declaration and definition) a `cse_v*` scalar that TVM's host/device
    split made a parameter but the kernel body no longer reads (its uses were simplified away): the launcher
    knows the kernel's own parameters only, and a launch with one argument too few is refused by the driver."""
    defs = list(_KERNEL_DEF.finditer(raw))
    for k, m in enumerate(defs):
        body = raw[m.end():defs[k + 1].start() if k + 1 < len(defs) else len(raw)]
        args = [a.strip() for a in m.group(2).split(",")]
        dead = [a for a in args if re.fullmatch(r"\w+ (cse_v\d+)", a) and not re.search(rf"\b{a.split()[-1]}\b", body)]
        if dead:
            kept = ", ".join(a for a in args if a not in dead)
            raw = raw.replace(f"{m.group(1)}({m.group(2)})", f"{m.group(1)}({kept})")
            return drop_unused_params(raw)
    return raw


_LINE_MARK = re.compile(r"^(\s*)tl_line_(\d+)\(\);\s*$")


def without_restrict(source: str, args) -> str:
    """Kernel signatures with `__restrict__` dropped from the pointer parameters `args` (T.annotate_restrict_buffers:
    tensors that may alias)."""
    names = "|".join(re.escape(a) for a in args)
    if not names:
        return source
    pattern = re.compile(rf"__restrict__ (?=(?:{names})\b)")
    return "\n".join(pattern.sub("", ln) if "__global__" in ln else ln for ln in source.split("\n"))


def first_error_line(exc: Exception) -> str:
    """The informative line of a TVM error (its messages end in an ASCII-art source excerpt)."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    for ln in lines:
        if ln.lower().startswith("error") or "Error" in ln or "Check failed" in ln:
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]


def kernel_symbol(source: str) -> str | None:
    """The name of the first `__global__` function in the source (None when there is none)."""
    m = re.search(r'extern "C" __global__ void (?:__launch_bounds__\([\d, ]+\) )?(\w+)\(', source)
    return m.group(1) if m else None


def kernel_signature(source: str, symbol: str) -> str | None:
    """The parameter list of the `__global__` function `symbol` in the source (None when absent)."""
    m = re.search(r'extern "C" __global__ void (?:__launch_bounds__\([\d, ]+\) )?' + re.escape(symbol) + r'\(([^)]*)\)',
                  source)
    return m.group(1) if m else None


def finish_source(cuda: str, extra: list) -> tuple[str, list]:
    """Insert the device library into cleaned CUDA text (`clean_source`) and turn line markers into comments;
    returns (source, line_map)."""
    text = insert_prelude(cuda, (DESC + "".join(extra)) if extra else "")
    lines = text.split("\n")
    out, marks = [], []
    for ln in lines:
        m = _LINE_MARK.match(ln)
        if m:
            marks.append((int(m.group(2)), len(out) + 1))
            out.append(f"{m.group(1)}// tilelang source line {m.group(2)}")
        else:
            out.append(ln)
    line_map: dict[int, list[int]] = {}
    for k, (src_line, at) in enumerate(marks):
        end = marks[k + 1][1] if k + 1 < len(marks) else at + 1
        rng = list(range(at, max(end, at + 1)))
        line_map.setdefault(src_line, []).extend(rng)
    return "\n".join(out), sorted(line_map.items())
