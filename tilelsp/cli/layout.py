"""`tilelsp layout FILE [--buffer NAME] [--kernel K] [--target ARCH] [--format svg|png|text|html] [-o PATH]`:
draw which thread holds each fragment element and which bank each shared-tile element lands in."""
from __future__ import annotations

import sys

from .ir import pick_kernel

FORMATS = ("text", "svg", "png", "html")


def run_layout(args) -> int:
    """Print (or write to --output) the layout view of one kernel's buffers. Exit 1 when the file has errors or
    the layout cannot be planned, 2 for usage errors (unknown kernel/buffer, PNG without matplotlib)."""
    from tilelang_core.codegen.cuda.common import LoweringError
    from tilelang_core.target import canonical

    from tilelsp.features.layout_view import maps_for, page_title, render
    from .loading import EXIT_USAGE, load_checked

    try:
        target = canonical(args.target)
    except ValueError as exc:
        print(f"tilelsp layout: {exc}", file=sys.stderr)
        return EXIT_USAGE
    loaded = load_checked(args.file, "layout", targets=(target,) if target != "cpu" else None)
    if isinstance(loaded, int):
        return loaded
    kernel = pick_kernel(loaded.result.kernels, args.kernel)
    if kernel is None:
        have = ", ".join(sorted({k.name for k in loaded.result.kernels})) or "none"
        print(f"tilelsp layout: no kernel named {args.kernel!r} in {loaded.display} (kernels: {have})", file=sys.stderr)
        return EXIT_USAGE
    fmt = args.format or ("svg" if args.buffer else "text")
    try:
        data = render(maps_for(kernel, target, args.buffer), fmt, page_title(kernel, target))
    except LookupError as exc:
        print(f"tilelsp layout: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except LoweringError as exc:
        line = f"{loaded.display}:{exc.span.line}: " if getattr(exc, "span", None) else ""
        print(f"{line}error: {exc}", file=sys.stderr)
        return 1
    except ImportError:
        print("tilelsp layout: --format png needs matplotlib (pip install 'tilelsp[layout]')", file=sys.stderr)
        return EXIT_USAGE
    if args.output:
        with open(args.output, "wb") as fh:
            fh.write(data)
        return 0
    if fmt == "png" and sys.stdout.isatty():
        print("tilelsp layout: PNG is binary; write it with -o FILE.png", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    return 0
