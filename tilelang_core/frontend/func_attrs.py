"""Kernel-level annotations, kept on the PrimFunc rather than in its body: `T.annotate_pass_configs({...})` (the
kernel's TileLang pass configs, as if given to `tilelang.compile`) and `T.annotate_compile_flags([...])` (the nvcc
flags it asks for; options.kernel_configs reads the ones a pass config stands for) and
`T.annotate_restrict_buffers(x, y)` (tensor parameters that may alias)."""
from __future__ import annotations

import ast

from ..ir import nodes as N
from .discover import literal_pass_configs
from .kernel_errors import KernelError


def h_annotate_pass_configs(p, b, node, short):
    """T.annotate_pass_configs({PassConfigKey.TL_X: value, "tl.y": value}) or a dict the kernel sees: merged into the
    kernel's pass configs."""
    mapping = b.get("configs")
    if isinstance(mapping, ast.Dict):
        known, given = dict(literal_pass_configs(mapping, p.env)), len(mapping.keys)
    else:
        value = p.ev.eval(mapping) if mapping is not None else None
        if not isinstance(value, dict):
            raise KernelError("bad-arguments", "T.annotate_pass_configs takes a dict {PassConfigKey.TL_...: value, "
                              "...}", node)
        known = {getattr(k, "value", k): v for k, v in value.items()}  # PassConfigKey members read as their strings
        known = {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, (bool, int, float, str))}
        given = len(value)
    if len(known) != given:
        raise KernelError("bad-arguments", "each key of T.annotate_pass_configs must be a `PassConfigKey.TL_...` "
                          "member or a config string such as \"tl.enable_fast_math\", and each value a bool, number "
                          "or string known when the kernel is defined", mapping)
    p.pass_configs.update(known)


def h_annotate_compile_flags(p, b, node, short):
    """T.annotate_compile_flags(["--use_fast_math", ...]) or one flag string: kept as the kernel's compile flags."""
    flags = p.ev.eval(b["flags"]) if b.get("flags") is not None else None
    flags = [flags] if isinstance(flags, str) else flags
    if not isinstance(flags, (list, tuple)) or not all(isinstance(f, str) for f in flags):
        raise KernelError("bad-arguments", "T.annotate_compile_flags takes a flag string or a list of flag strings, "
                          "e.g. [\"--use_fast_math\"]", node)
    p.compile_flags.extend(f for f in flags if f not in p.compile_flags)


def h_annotate_restrict_buffers(p, b, node, short):
    """T.annotate_restrict_buffers(x, y, ...): the kernel's tensor parameters that may alias (overlapping views of one
    tensor) lose `__restrict__` (TileLang's meaning; other buffers are ignored, as there)."""
    for arg in node.args:
        buf = p.ev.eval(arg)
        if not isinstance(buf, N.Buffer):
            raise KernelError("bad-arguments", f"T.annotate_restrict_buffers takes buffers; `{ast.unparse(arg)}` is "
                              "not one", arg)
        if buf.scope == "global" and buf.name not in p.non_restrict:
            p.non_restrict.append(buf.name)


FUNC_ATTR_HANDLERS = {"annotate_pass_configs": h_annotate_pass_configs,
                      "annotate_compile_flags": h_annotate_compile_flags,
                      "annotate_restrict_buffers": h_annotate_restrict_buffers}
