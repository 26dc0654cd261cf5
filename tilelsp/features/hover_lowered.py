"""Hover sections from the stored lowering (on save or after an edit settles; the hover never lowers): the kernel's
code, the CUDA lines of the statement under the cursor (the LowerResult's line map), what a `T.gemm` call lowered
to, and layout pictures."""
from __future__ import annotations

import json
import re
from urllib.parse import quote

from .cuda_excerpt import statement_excerpt

PREVIEW_LINES = 24
_GLOBAL = re.compile(r'extern "C" __global__ .*\{\s*$')


def fmt_bytes(n) -> str:
    """Human-readable byte count ("48 KiB", "1,536 B", "?")."""
    if n is None:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024:,} KiB"
    if n >= 1024:
        return f"{n / 1024:,.1f} KiB"
    return f"{n:,} B"


def command_link(title: str, command: str, args) -> str:
    """A Markdown link that runs a client command with JSON arguments."""
    return f"[{title}](command:{command}?{quote(json.dumps(args))})"


def entry_for(lowered, kernel: str | None):
    """The first successful lowering entry of `kernel`."""
    return next((e for e in lowered or () if e.get("kernel") == kernel and not e.get("error")), None)


def _fenced(lang: str, lines: list[str], more: bool) -> str:
    tail = ("\n# …" if lang == "python" else "\n// …") if more else ""
    return f"```{lang}\n" + "\n".join(lines) + tail + "\n```"


def kernel_sections(k, lowered, uri: str) -> list[str]:
    """Launch data, and the TIR and the kernel's CUDA (from its `__global__` line, not the file's header)."""
    entry = entry_for(lowered, k.name)
    if entry is None:
        return []
    out = []
    if entry.get("smem_bytes") is not None:
        out.append(f"after lowering ({entry.get('target')}): {fmt_bytes(entry['smem_bytes'])} shared memory allocated")
    launch = entry.get("launch") or {}
    for n, one in enumerate(launch.get("kernels") or [launch] if launch.get("grid") is not None else []):
        label = f"launch {n + 1} of {len(launch['kernels'])}" if launch.get("kernels") else "launch"
        out.append(f"{label}: grid {tuple(one['grid'])}, block {tuple(one.get('block') or ())}, "
                   f"dynamic shared memory {fmt_bytes(one.get('dynamic_smem'))}")
    if launch.get("workspaces"):
        out.append("workspaces (T.alloc_global, allocated per call): " + ", ".join(
            f"`{w['name']}` {w['dtype']}{list(w['shape'])}" for w in launch["workspaces"]))
    for key, lang, cmd in (("tir", "python", "tilelsp.showIR"), ("cuda", "cuda", "tilelsp.showCuda")):
        text = entry.get(key)
        if not text:
            continue
        lines = text.splitlines()
        start = next((i for i, ln in enumerate(lines) if _GLOBAL.match(ln)), 0) if key == "cuda" else 0
        shown = lines[start:start + PREVIEW_LINES]
        link = command_link(f"full {key.upper()} ({len(lines)} lines)", cmd, [uri, k.name])
        out.append(f"<details><summary>{key.upper()}</summary>\n\n"
                   f"{_fenced(lang, shown, len(lines) > start + PREVIEW_LINES)}\n\n{link}\n</details>")
    return out


def statement_cuda(lowered, kernel: str | None, line: int, uri: str) -> str:
    """The CUDA lines the lowering generated for the statement that starts on `line` (1-based), or '': the first
    place it was emitted, index arithmetic elided (cuda_excerpt.py), the rest behind Show CUDA."""
    for entry in lowered or ():
        if entry.get("error") or (kernel is not None and entry.get("kernel") != kernel):
            continue
        cuda_lines = (entry.get("cuda") or "").splitlines()
        mapped = next((lines for src, lines in entry.get("line_map") or () if src == line), None)
        shown, body, more_lines, more_places = statement_excerpt(cuda_lines, mapped or [])
        if not body:
            continue
        # the client's Show CUDA puts the cursor on this line: all of its CUDA lines are highlighted there
        link = command_link("Show CUDA beside the source", "tilelsp.showCuda", [uri, entry.get("kernel"), line - 1])
        where = f"CUDA line {shown[0]}" if len(shown) == 1 else f"CUDA lines {shown[0]}–{shown[-1]}"
        elided = "; long index arithmetic shown as …" if any("…" in ln for ln in body) else ""
        head = f"CUDA for line {line} ({entry.get('target')}, {where}{elided}):"
        rest = (f"\n\n{_count(more_lines, 'more line')} of this statement in {_count(more_places, 'other place')} "
                "(e.g. a stream-K or tail loop)" if more_places else "")
        return f"{head}\n\n{_fenced('cuda', body[:PREVIEW_LINES], len(body) > PREVIEW_LINES)}{rest}\n\n{link}"
    return ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def gemm_section(lowered, line: int) -> str:
    """What the `T.gemm` on `line` lowered to, per target, or ''."""
    out = []
    for entry in lowered or ():
        for g in entry.get("gemms") or ():
            if g["line"] <= line <= g["end_line"]:
                a, b, c = g["dtypes"]
                out.append(f"**this call on {entry.get('target')}**: M={g['m']} N={g['n']} K={g['k']}; "
                           f"A {a}, B {b}, C {c}\n\n- instruction: `{g['instruction']}`\n- warps: {g['warps']} "
                           f"({g['threads']} threads)\n- A: {g['swizzle']['A']}\n- B: {g['swizzle']['B']}")
    return "\n\n".join(out)


def layout_image(lowered, kernel: str | None, buffer: str, uri: str) -> str:
    """The buffer's layout picture (a data: URI) from the last lowering, with a link to the Show Layout panel."""
    for entry in lowered or ():
        if entry.get("kernel") != kernel:
            continue
        uri_data = (entry.get("layout_images") or {}).get(buffer)
        if uri_data:
            link = command_link("Show Layout", "tilelsp.showLayout", [uri, kernel, buffer])
            return f"![layout of {buffer}]({uri_data})\n\n{link}"
    return ""
