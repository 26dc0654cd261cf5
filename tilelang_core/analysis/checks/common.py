"""Small helpers shared by the check rules: related locations and operand descriptions."""
from __future__ import annotations

from ...diagnostics import Related
from ...ir import nodes as N
from ..infer import dims_str, region_extents


def declared(buf: N.Buffer) -> tuple[Related, ...]:
    """A related location pointing at where a buffer is allocated or declared."""
    if buf.span is None:
        return ()
    what = "declared here" if buf.scope == "global" else "allocated here"
    return (Related(buf.span, f"{buf.name} {what}"),)


def related_for(*bufs: N.Buffer) -> tuple[Related, ...]:
    """Declaration locations of several buffers (each once, in order)."""
    out: list[Related] = []
    seen: list = []
    for b in bufs:
        if any(b is s for s in seen):
            continue
        seen.append(b)
        out.extend(declared(b))
    return tuple(out)


def describe(region: N.Region) -> str:
    """'A_shared (64×32)' or 'A[...] (a 64×32 slice)' for messages."""
    ext = dims_str(region_extents(region))
    if region.kind == "full":
        return f"{region.buffer.name} ({ext})"
    return f"the {ext} slice of {region.buffer.name}"


def scope_name(scope: str) -> str:
    """A user-facing word for a buffer scope."""
    return {"global": "a global tensor", "shared": "shared memory", "shared.dyn": "shared memory",
            "local.fragment": "a fragment", "local": "a T.alloc_local buffer",
            "local.var": "a T.alloc_var scalar"}.get(scope, scope)
