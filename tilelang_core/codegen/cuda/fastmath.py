"""TileLang's `tl.enable_fast_math` pass config on the CUDA backend (off by default, as in TileLang).

`pass_configs={"tl.enable_fast_math": True}` on `tilelang.jit` / `tilelang.compile` (the key is
`tilelang.PassConfigKey.TL_ENABLE_FAST_MATH`) builds that kernel with nvcc's `--use_fast_math`, as TileLang does,
and emits fp32 `T.exp2` as `ex2.approx.ftz` (`tl::exp2_ftz`). The lowering sees the setting through
`pass_config_scope`, entered with the kernel's `PrimFunc.pass_configs` (the decorator's literal configs, read by the
frontend, so `tilelsp ir` and hovers show the same code; the JIT adds the ones it is given); a context variable, so
concurrent builds do not share it. The generated source ends with `MARKER`, so the cubin follows from the source.
"""
from __future__ import annotations

import contextlib
import contextvars
import os

FAST_MATH_KEY = "tl.enable_fast_math"
MARKER = "// tl.enable_fast_math: compiled with nvcc --use_fast_math\n"

_fast_math = contextvars.ContextVar("tilelsp_fast_math", default=False)


def fast_math() -> bool:
    """Whether the kernel being lowered asked for fast math (`pass_config_scope`)."""
    return _fast_math.get()


def fast_exp2() -> bool:
    """fp32 exp2 as `ex2.approx.ftz`: under fast math, or with TILELSP_FAST_EXP2=1 alone."""
    return fast_math() or os.environ.get("TILELSP_FAST_EXP2") == "1"


def wants_fast_math(pass_configs) -> bool:
    """TileLang's reading of the config: `bool(pass_configs.get("tl.enable_fast_math", False))` (a dict or the
    (key, value) pairs of `PrimFunc.pass_configs`)."""
    return bool(dict(pass_configs or {}).get(FAST_MATH_KEY, False))


@contextlib.contextmanager
def pass_config_scope(pass_configs):
    """Lower inside this block with a kernel's `pass_configs` in force (`generate` and the pipeline's `lower`
    enter it with `PrimFunc.pass_configs`)."""
    token = _fast_math.set(wants_fast_math(pass_configs))
    try:
        yield
    finally:
        _fast_math.reset(token)


def mark_source(source: str) -> str:
    """The generated source, with `MARKER` appended under fast math."""
    return source + ("\n" + MARKER if fast_math() else "")


def nvcc_flags(source: str) -> list[str]:
    """nvcc's extra flags for a generated source (`--use_fast_math` when it carries `MARKER`)."""
    return ["--use_fast_math"] if source.endswith(MARKER) else []
