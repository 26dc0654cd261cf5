"""`tilelsp ir FILE [--kernel NAME] [--stage STAGE] [--target ARCH|cpu] [--list-stages]`: print one lowering stage."""
from __future__ import annotations

import sys
from pathlib import Path


def _render(diags, path: str) -> str:
    lines = []
    for d in diags:
        sp = d.span
        lines.append(f"{path}:{sp.line}:{sp.col + 1}: {d.severity.value}[{d.code}]: {d.message}")
    return "\n".join(lines)


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
    """Print the requested stage of a kernel; diagnostics and exit 1 when the file or lowering has errors."""
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.passes.pipeline import lower, normalize_target, stage_names

    try:
        target = normalize_target(args.target)
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
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"tilelsp ir: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    from tilelang_core import check_source

    result = check_source(text, str(path))
    if result.errors:
        print(_render(result.errors, str(path)), file=sys.stderr)
        return 1
    kernel = pick_kernel(result.kernels, args.kernel)
    if kernel is None:
        have = ", ".join(sorted({k.name for k in result.kernels})) or "none"
        print(f"tilelsp ir: no kernel {args.kernel!r} in {path} (kernels: {have})", file=sys.stderr)
        return 1
    try:
        res = lower(kernel, target, until=stage)
    except CompileError as exc:
        print(_render(exc.diagnostics, str(path)), file=sys.stderr)
        return 1
    print(res.stages[stage])
    return 0
