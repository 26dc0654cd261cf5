"""SVG pictures of layout maps (layout_maps.py), and the HTML page the VS Code webview shows.

A fragment: the whole tile coloured by the warp that holds each element (hatched where several threads hold
it), then the top-left corner at full size with each element's `T<thread>` / `r<register>`. A shared tile: each
element coloured by the 16-byte slot of the 128-byte bank line it lands in, labelled with its bank, and the bank
conflicts of its access patterns. Horizontal runs of equal cells are drawn as one rectangle, so a 128x128 tile
stays a few kilobytes.
"""
from __future__ import annotations

from html import escape

from .layout_maps import FragmentMap, SharedMap

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac", "#1f4e79", "#b35806", "#8c1b1b", "#2d6a64", "#2e5c28", "#8a7300")
HATCH = "rep"
_FONT = "DejaVu Sans Mono,monospace"
MAX_WIDTH, MAX_ROWS_PX = 720, 720


def colour(k: int) -> str:
    """The palette colour of warp / slot `k`."""
    return PALETTE[k % len(PALETTE)]


def cell_size(cols: int, lo: int = 4, hi: int = 28) -> int:
    """Pixels per element for a tile `cols` wide."""
    return max(lo, min(hi, MAX_WIDTH // max(cols, 1)))


class _Svg:
    """A minimal SVG builder: elements as strings, the size grows with what is drawn."""

    def __init__(self):
        self.parts: list[str] = []
        self.width = self.height = 0

    def rect(self, x, y, w, h, fill, extra="") -> None:
        self.parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}"{extra}/>')
        self.width, self.height = max(self.width, x + w), max(self.height, y + h)

    def text(self, x, y, s, size=11, extra="") -> None:
        sized = f' font-size="{size}"' if size != 11 else ""
        self.parts.append(f'<text x="{x}" y="{y}"{sized}{extra}>{escape(str(s))}</text>')
        self.width, self.height = max(self.width, x + len(str(s)) * size * 0.62), max(self.height, y + 4)

    def line(self, x1, y1, x2, y2, stroke="#ffffff", width=1) -> None:
        self.parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{stroke}" stroke-width="{width}"/>')

    def done(self, title: str) -> str:
        w, h = int(self.width) + 12, int(self.height) + 12
        defs = (f'<defs><pattern id="{HATCH}" width="6" height="6" patternUnits="userSpaceOnUse" '
                'patternTransform="rotate(45)"><rect width="2" height="6" fill="#000000" fill-opacity="0.35"/>'
                '</pattern></defs>')
        style = f"<style>text{{font-family:{_FONT};font-size:11px}}</style>"
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
                f'<title>{escape(title)}</title>{style}{defs}<rect width="{w}" height="{h}" fill="#ffffff"/>'
                + "".join(self.parts) + "</svg>")


def _runs(svg: _Svg, keys: list, cols: int, rows: int, x0: int, y0: int, cs: int, fill_of) -> None:
    """Draw rows of cells keyed by `keys` (row-major), merging equal neighbours; fill_of(key) -> fill or None."""
    for i in range(rows):
        j = 0
        while j < cols:
            key, start = keys[i * cols + j], j
            while j < cols and keys[i * cols + j] == key:
                j += 1
            fill = fill_of(key)
            if fill:
                svg.rect(x0 + start * cs, y0 + i * cs, (j - start) * cs, cs, fill)


def _grid_lines(svg: _Svg, rows: int, cols: int, x0: int, y0: int, cs: int, every: int = 8) -> None:
    for j in range(every, cols, every):
        svg.line(x0 + j * cs, y0, x0 + j * cs, y0 + rows * cs)
    for i in range(every, rows, every):
        svg.line(x0, y0 + i * cs, x0 + cols * cs, y0 + i * cs)


def _legend(svg: _Svg, y: int, items: list) -> int:
    """Swatches (fill, label, css class) in rows of four; returns the y below them."""
    for k, (fill, label, cls) in enumerate(items):
        x, yy = 8 + (k % 4) * 180, y + (k // 4) * 24
        svg.rect(x, yy, 18, 18, fill, f' class="legend-cell {cls}" stroke="#333333" stroke-width="0.5"')
        svg.text(x + 24, yy + 14, label, 11)
    return y + ((len(items) + 3) // 4) * 24 + 6


def fragment_svg(m: FragmentMap) -> str:
    """The thread <-> element picture of a fragment."""
    svg, (rows, cols) = _Svg(), m.grid
    copies = sorted({len(o) for o in m.owners})
    svg.text(8, 18, f"{m.name}: local.fragment {'x'.join(map(str, m.shape))} {m.dtype} — {m.kind}", 14,
             ' font-weight="bold"')
    svg.text(8, 36, f"{m.layout}; {m.threads} threads")
    held = "each element held by " + (f"{copies[0]} thread" + ("s" if copies[0] > 1 else "")
                                       if len(copies) == 1 else f"{copies[0]}–{copies[-1]} threads")
    svg.text(8, 52, held + " (hatched: more than one)" if copies[-1] > 1 else held)
    cs, y0 = cell_size(cols), 62
    warps = [o[0][0] // 32 if o else -1 for o in m.owners]
    _runs(svg, warps, cols, rows, 8, y0, cs, lambda w: colour(w) if w >= 0 else "#dddddd")
    _runs(svg, [len(o) > 1 for o in m.owners], cols, rows, 8, y0, cs, lambda rep: f"url(#{HATCH})" if rep else None)
    _grid_lines(svg, rows, cols, 8, y0, cs)
    y = y0 + rows * cs + 22
    n_warps = max(1, -(-m.threads // 32))
    items = [(colour(w), f"warp {w} (T{32 * w}–T{32 * w + 31})", f"warp-{w}") for w in range(min(n_warps, 16))]
    if copies[-1] > 1:
        items.append((f"url(#{HATCH})", "held by several threads", "replicated"))
    y = _legend(svg, y, items)
    dr, dc = min(rows, 16), min(cols, 16)
    svg.text(8, y + 12, f"rows 0–{dr - 1}, columns 0–{dc - 1}: thread T and register r of each element", 12)
    y += 20
    for i in range(dr):
        for j in range(dc):
            owners = m.owners[i * cols + j]
            x, yy = 8 + j * 44, y + i * 30
            svg.rect(x, yy, 43, 29, colour(owners[0][0] // 32) if owners else "#dddddd", ' fill-opacity="0.55"')
            if owners:
                tx, r = owners[0]
                more = f"+{len(owners) - 1}" if len(owners) > 1 else ""
                svg.text(x + 3, yy + 12, f"T{tx}{more}"[:7], 10)
                svg.text(x + 3, yy + 25, f"r{r}", 10)
    return svg.done(f"layout of {m.name}")


def shared_svg(m: SharedMap) -> str:
    """The bank picture of a shared tile, with its access patterns' conflicts."""
    svg, (rows, cols) = _Svg(), m.grid
    svg.text(8, 18, f"{m.name}: shared {'x'.join(map(str, m.shape))} {m.dtype}", 14, ' font-weight="bold"')
    svg.text(8, 36, f"swizzle: {m.swizzle_name}")
    cs = cell_size(cols, 6, 26)
    shown = min(rows, max(8, MAX_ROWS_PX // cs // 8 * 8))
    svg.text(8, 52, "colour: 16-byte slot of the 128-byte bank line; number: bank"
             + (f"; rows 0–{shown - 1} of {rows} shown" if shown < rows else ""))
    y0 = 62
    slots = [m.chunk_slot(e) for e in range(shown * cols)]
    _runs(svg, slots, cols, shown, 8, y0, cs, colour)
    _grid_lines(svg, shown, cols, 8, y0, cs, 16 // m.elem_bytes if m.elem_bytes <= 16 else 1)
    if cs >= 16:
        for i in range(shown):
            for j in range(cols):
                svg.text(8 + j * cs + 2, y0 + i * cs + cs - 5, m.banks[i * cols + j], 9)
    y = y0 + shown * cs + 22
    y = _legend(svg, y, [(colour(s), f"slot {s}: banks {4 * s}–{4 * s + 3}", f"slot-{s}") for s in range(8)])
    svg.text(8, y + 12, "bank conflicts (per memory request: 8 lanes x 16 B, or a warp of 4-byte words)", 12,
             ' font-weight="bold"')
    for k, p in enumerate(m.patterns):
        svg.text(8, y + 30 + 16 * k, pattern_line(p), 11)
    return svg.done(f"banks of {m.name}")


def pattern_line(p) -> str:
    """One access pattern's conflicts as a sentence."""
    verdict = "conflict-free" if p.conflicts == 0 else f"{p.worst}-way conflicts, {p.conflicts} extra wavefronts"
    return f"{p.name}: {p.requests} requests, {p.wavefronts} wavefronts ({verdict})"


def buffer_svg(m) -> str:
    """The picture of one map."""
    return fragment_svg(m) if isinstance(m, FragmentMap) else shared_svg(m)


def layout_html(title: str, sections: list[tuple[str, str]]) -> str:
    """A self-contained page (no scripts; inline SVG) with one section per buffer: (name, svg)."""
    toc = " · ".join(f'<a href="#{escape(n)}">{escape(n)}</a>' for n, _ in sections)
    body = "".join(f'<section id="{escape(n)}"><h2>{escape(n)}</h2>{svg}</section>' for n, svg in sections)
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:;\">"
            f"<title>{escape(title)}</title><style>body{{background:#ffffff;color:#111111;font-family:sans-serif;"
            "margin:12px}h1{font-size:16px}h2{font-size:14px;margin:18px 0 4px}svg{display:block}</style></head>"
            f"<body><h1>{escape(title)}</h1><nav>{toc}</nav>{body}</body></html>")
