"""`tilelsp ir FILE [--kernel NAME] [--stage STAGE] [--target ARCH|cpu] [--list-stages]`: print one lowering stage."""
from __future__ import annotations

import sys

from .formats import FileResult, render_text


def pick_kernel(kernels, name: str | None):
    """The kernel whose name or factory is `name` (the first kernel when None)."""
    if not kernels:
        return None
    if name is None:
        return kernels[0]
    for k in kernels:
        if name in (k.name, k.factory):
            return k
    return None


def run_ir(args) -> int:
    """Print the requested stage of a kernel. The file is read and checked as `check` does (loading.py): exit 1
    when it or its lowering has errors, 2 for usage errors and unreadable files, 0 with a note without kernels."""
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import lower, stage_names
    from tilelang_core.target import canonical

    try:
        target = canonical(args.target)
    except ValueError as exc:
        print(f"tilelsp ir: {exc}", file=sys.stderr)
        return 2
    names = stage_names(target)
    if getattr(args, "list_stages", False):
        print("\n".join(names))
        return 0
    stage = args.stage or names[-1]
    if stage not in names:
        print(f"tilelsp ir: unknown stage {stage!r} for {target}; stages: {', '.join(names)}", file=sys.stderr)
        return 2
    from .loading import EXIT_USAGE, load_checked

    loaded = load_checked(args.file, "ir", targets=(target,) if target != "cpu" else None)
    if isinstance(loaded, int):
        return loaded
    kernel = pick_kernel(loaded.result.kernels, args.kernel)
    if kernel is None:
        have = ", ".join(sorted({k.name for k in loaded.result.kernels}))
        print(f"tilelsp ir: no kernel named {args.kernel!r} in {loaded.display} (kernels: {have})", file=sys.stderr)
        return EXIT_USAGE
    try:
        res = lower(kernel, target, until=stage)
    except CompileError as exc:
        sys.stderr.write(render_text([FileResult(loaded.display, loaded.text, list(exc.diagnostics))]))
        return 1
    print(res.stages[stage])
    return 0
