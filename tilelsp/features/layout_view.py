"""Layout views of one kernel instance: the maps (layout_maps.py) rendered as SVG, text, PNG and the webview page.

`layout_request` is the worker's `layout` op behind the server's `tilelsp/layout` request; `hover_notes` gives
the on-save lowering a picture per buffer and each shared tile's swizzle for the hover. The CLI's `tilelsp layout` uses `render`.
"""
from __future__ import annotations

import base64

from tilelang_core.target import ARCHS, DEFAULT_ARCH, canonical

from .layout_maps import FragmentMap, kernel_maps
from .layout_svg import buffer_svg, layout_html
from .layout_text import buffer_png, buffer_text

HOVER_IMAGE_LIMIT = 96 * 1024  # bytes of SVG; larger pictures are left to Show Layout


def maps_for(func, arch: str, buffer: str | None = None) -> list:
    """The maps of a kernel's buffers (only `buffer` when given; LookupError naming the buffers there are)."""
    if canonical(arch) == "cpu":
        raise LookupError(f"layouts are a CUDA lowering's; pick a CUDA target ({', '.join(ARCHS)})")
    maps = kernel_maps(func, arch)
    if buffer is None:
        return maps
    picked = [m for m in maps if m.name == buffer]
    if not picked:
        names = ", ".join(m.name for m in maps) or "none"
        raise LookupError(f"kernel `{func.name}` has no fragment or shared buffer named {buffer!r} (it has: {names})")
    return picked


def scope_of(m) -> str:
    """`local.fragment` or `shared` for a map."""
    return "local.fragment" if isinstance(m, FragmentMap) else "shared"


def describe(m) -> str:
    """One line about a map: its layout (fragment) or swizzle (shared)."""
    return f"{m.kind}: {m.layout}" if isinstance(m, FragmentMap) else f"swizzle: {m.swizzle_name}"


def page_title(func, arch: str) -> str:
    """The webview / HTML page title of a kernel instance's layouts."""
    inst = f" {func.instance}" if getattr(func, "instance", None) else ""
    return f"layouts of kernel {func.name}{inst} on {arch}"


def render(maps: list, fmt: str, title: str) -> bytes:
    """One rendering of the maps: svg (one buffer), png (one buffer), text or html (any number)."""
    if fmt == "text":
        return "\n".join(buffer_text(m) for m in maps).encode()
    if fmt == "html":
        return layout_html(title, [(m.name, buffer_svg(m)) for m in maps]).encode()
    if len(maps) != 1:
        raise LookupError(f"--format {fmt} draws one buffer; name it with --buffer ({', '.join(m.name for m in maps)})")
    return buffer_svg(maps[0]).encode() if fmt == "svg" else buffer_png(maps[0])


def layout_request(req: dict, funcs: list) -> dict:
    """The worker's `layout` op: SVG and text of each buffer of the kernel, and the webview page."""
    if not funcs:
        raise LookupError(f"no kernel named {req.get('kernel')!r} in this file")
    func, arch = funcs[0], req.get("target") or DEFAULT_ARCH
    maps = maps_for(func, arch, req.get("buffer"))
    buffers = [{"name": m.name, "scope": scope_of(m), "description": describe(m), "svg": buffer_svg(m),
                "text": buffer_text(m)} for m in maps]
    title = page_title(func, arch)
    return {"kernel": func.name, "instance": func.instance, "target": arch, "title": title, "buffers": buffers,
            "html": layout_html(title, [(b["name"], b["svg"]) for b in buffers])}


def hover_notes(func, arch: str) -> dict:
    """{"layout_images": {buffer: data: URI of its SVG}, "swizzles": {shared tile: swizzle}} for the buffer hover
    (empty when the layout cannot be planned)."""
    try:
        maps = maps_for(func, arch)
    except Exception:  # noqa: BLE001 - the lowering reports its own errors; the hover goes without a picture
        return {}
    images = {}
    for m in maps:
        svg = buffer_svg(m).encode()
        if len(svg) <= HOVER_IMAGE_LIMIT:
            images[m.name] = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    swizzles = {m.name: m.swizzle_name for m in maps if not isinstance(m, FragmentMap)}
    return {"layout_images": images, "swizzles": swizzles}
