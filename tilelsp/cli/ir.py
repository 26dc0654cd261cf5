"""`tilelsp ir FILE [--kernel NAME] [--stage STAGE] [--target ARCH|cpu] [--list-stages] [--progress]`: print one
lowering stage (kept between runs by content, ir_cache.py; stage progress on stderr, stage_progress.py)."""
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
    from tilelang_core.lowering import stage_names
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
    text = _lowered(kernel, target, stage, names[:names.index(stage) + 1], _show_progress(args), loaded)
    if isinstance(text, int):
        return text
    print(text)
    return 0


def _show_progress(args) -> bool:
    """--progress / --no-progress, else progress on stderr only when it is a terminal."""
    flag = getattr(args, "progress", None)
    return sys.stderr.isatty() if flag is None else flag


def _lowered(kernel, target: str, stage: str, stages: tuple, progress: bool, loaded) -> str | int:
    """The stage's text from the cache (ir_cache.py), else lowered with stage progress and kept; 1 on errors."""
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import lower, reporting_stages

    from . import ir_cache
    from .stage_progress import StageProgress

    key = ir_cache.stage_key(kernel, target, stage)
    text = ir_cache.load(key)
    if text is not None:
        if progress:
            print(f"tilelsp ir: {kernel.name} ({target}): {stage} from the cache", file=sys.stderr)
        return text
    shown = StageProgress(f"tilelsp ir: lowering {kernel.name} for {target}", stages, progress)
    try:
        with reporting_stages(shown.done):
            res = lower(kernel, target, until=stage)
    except CompileError as exc:
        shown.finish("stopped by errors")
        sys.stderr.write(render_text([FileResult(loaded.display, loaded.text, list(exc.diagnostics))]))
        return 1
    shown.finish(f"{stage} ready")
    ir_cache.store(key, res.stages[stage])
    return res.stages[stage]
