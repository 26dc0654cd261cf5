"""Layout maps as a text grid (the CLI's `--format text`, Neovim's :TilelspLayout) and as PNG (matplotlib)."""
from __future__ import annotations

import io

from .layout_maps import FragmentMap, SharedMap
from .layout_svg import PALETTE, pattern_line

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
DETAIL = 16


def fragment_text(m: FragmentMap) -> str:
    """Warp of each element (one character), then the top-left corner as thread:register."""
    rows, cols = m.grid
    copies = sorted({len(o) for o in m.owners})
    out = [f"{m.name}: local.fragment {'x'.join(map(str, m.shape))} {m.dtype} — {m.kind}",
           f"layout: {m.layout}; {m.threads} threads",
           f"each element held by {copies[0]}" + (f"–{copies[-1]}" if len(copies) > 1 else "") + " thread(s)",
           "", "warp holding each element (0-9a-z; '*' when threads of several warps hold it):"]
    for i in range(rows):
        cells = []
        for o in m.owners[i * cols:(i + 1) * cols]:
            warps = {tx // 32 for tx, _ in o}
            cells.append("." if not o else "*" if len(warps) > 1 else _DIGITS[min(warps) % len(_DIGITS)])
        out.append(f"{i:4d} {''.join(cells)}")
    dr, dc = min(rows, DETAIL), min(cols, DETAIL)
    out += ["", f"rows 0-{dr - 1}, columns 0-{dc - 1}: thread:register (+n: n more threads hold it)"]
    out.append("     " + "".join(f"{j:>9}" for j in range(dc)))
    for i in range(dr):
        cells = []
        for o in m.owners[i * cols:i * cols + dc]:
            cell = f"{o[0][0]}:{o[0][1]}" + (f"+{len(o) - 1}" if len(o) > 1 else "") if o else "-"
            cells.append(f"{cell:>9}")
        out.append(f"{i:4d} " + "".join(cells))
    return "\n".join(out) + "\n"


def shared_text(m: SharedMap) -> str:
    """Bank slot of each element (which 16-byte slot of the 128-byte line), the first rows' banks, conflicts."""
    rows, cols = m.grid
    out = [f"{m.name}: shared {'x'.join(map(str, m.shape))} {m.dtype}", f"swizzle: {m.swizzle_name}", "",
           "16-byte slot of the 128-byte bank line each element lands in (slot s = banks 4s..4s+3):"]
    for i in range(rows):
        out.append(f"{i:4d} " + "".join(str(m.chunk_slot(e)) for e in range(i * cols, (i + 1) * cols)))
    dr, dc = min(rows, 8), min(cols, 32)
    out += ["", f"bank of each element, rows 0-{dr - 1}, columns 0-{dc - 1}:"]
    for i in range(dr):
        out.append(f"{i:4d} " + " ".join(f"{b:2d}" for b in m.banks[i * cols:i * cols + dc]))
    out += ["", "bank conflicts (per memory request: 8 lanes x 16 B, or a warp of 4-byte words):"]
    out += [f"  {pattern_line(p)}" for p in m.patterns]
    return "\n".join(out) + "\n"


def buffer_text(m) -> str:
    """The text grid of one map."""
    return fragment_text(m) if isinstance(m, FragmentMap) else shared_text(m)


def buffer_png(m) -> bytes:
    """The overview picture as PNG bytes (raises ImportError without matplotlib: `pip install tilelsp[layout]`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    rows, cols = m.grid
    if isinstance(m, FragmentMap):
        keys = [o[0][0] // 32 if o else 0 for o in m.owners]
        labels = [f"warp {w}" for w in range(max(keys) + 1)]
        title = f"{m.name}: {m.kind} — {m.layout}"
    else:
        keys = [m.chunk_slot(e) for e in range(rows * cols)]
        labels = [f"slot {s} (banks {4 * s}-{4 * s + 3})" for s in range(8)]
        title = f"{m.name}: {m.swizzle_name}"
    cmap = ListedColormap([PALETTE[k % len(PALETTE)] for k in range(len(labels))])
    grid = [[keys[i * cols + j] for j in range(cols)] for i in range(rows)]
    fig, ax = plt.subplots(figsize=(max(4.0, min(12.0, cols / 10)), max(3.0, min(12.0, rows / 10)) + 1), dpi=100)
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(labels) - 0.5, interpolation="nearest", aspect="equal")
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.legend(handles=[Patch(color=PALETTE[k % len(PALETTE)], label=t) for k, t in enumerate(labels)],
              fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
