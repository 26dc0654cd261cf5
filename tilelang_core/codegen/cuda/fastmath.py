"""TileLang's `tl.enable_fast_math` pass config on the CUDA backend (off by default, as in TileLang).

`pass_configs={"tl.enable_fast_math": True}` on `tilelang.jit` / `tilelang.compile` (the key is
`tilelang.PassConfigKey.TL_ENABLE_FAST_MATH`) builds that kernel with nvcc's `--use_fast_math`, as TileLang does,
and emits fp32 `T.exp2` as `ex2.approx.ftz` (`tl::exp2_ftz`). The lowering reads it from the kernel's
`CodegenOptions` (tilelang_core/options.py: the decorator's literal configs, read by the frontend, so `tilelsp ir`
and hovers show the same code; the JIT adds the ones it is given). The generated source ends with `MARKER`, so the
cubin follows from the source.
"""
from __future__ import annotations

from ...options import current_options

MARKER = "// tl.enable_fast_math: compiled with nvcc --use_fast_math\n"


def fast_exp2() -> bool:
    """fp32 exp2 as `ex2.approx.ftz`: under fast math, or with the fast_exp2 option (TILELSP_FAST_EXP2=1) alone."""
    options = current_options()
    return options.fast_math or options.fast_exp2


def mark_source(source: str) -> str:
    """The generated source, with `MARKER` appended under fast math."""
    return source + ("\n" + MARKER if current_options().fast_math else "")


def nvcc_flags(source: str) -> list[str]:
    """nvcc's extra flags for a generated source (`--use_fast_math` when it carries `MARKER`)."""
    return ["--use_fast_math"] if source.endswith(MARKER) else []
