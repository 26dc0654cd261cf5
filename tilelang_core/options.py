"""`CodegenOptions`: the one value per kernel that says how its code is generated, built in `codegen_options`.

The kernel's TileLang pass configs (`pass_configs=` of `tilelang.jit` / `tilelang.compile`, kept on
`PrimFunc.pass_configs`) come first, then the documented `TILELSP_*` environment overrides (docs/options.md);
nothing else in the compiler reads a code-changing switch. The lowering enters `options_scope` once per kernel
(`lowering.lower`, `codegen.cuda.generate`) and every decision reads `current_options()`; outside a scope
(a stage called on its own, e.g. the layout views) the overrides alone apply. The artifact cache key digests the
value (`runtime.artifact.ir_key`), so a kernel built under other options never matches.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass, replace

# TileLang pass configs honoured (key -> the field it sets and the value a true config gives it)
PASS_CONFIGS = {
    "tl.enable_fast_math": ("fast_math", True),
    "tl.disable_fast_math": ("fast_math", False),  # older TileLang's, where fast math was the default; it wins
    "tl.disable_wgmma": ("wgmma", False),
    "tl.disable_tma_lower": ("tma", False),
    "tl.disable_warp_specialized": ("warp_specialized", False),
    "tl.disable_loop_unswitching": ("loop_unswitching", False),
    "tl.disable_safe_memory_legalize": ("safe_memory", False),
}

# pass configs TileLang deprecates (a DeprecationWarning at every JIT entry that is given one) -> what to write instead
DEPRECATED_CONFIGS = {
    "tl.disable_tma_lower": "`tl.disable_tma_lower` is deprecated since TileLang v0.1.10 (tilelang_core still "
                            "honours it: no TMA loads); use `T.copy(..., disable_tma=True)` on the copies that must "
                            "not use TMA",
}

# `PassConfigKey.<NAME>` members whose string is not "tl." + the lower-case name without "TL_"
_KEY_SPELLINGS = {"TL_DISABLE_SAFE_MEMORY_ACCESS": "tl.disable_safe_memory_legalize",
                  "TL_DUMP_IR_DIR": "tl.dump_ir_path", "TL_SIMPLIFY": "tl.Simplify"}


# nvcc flags of `T.annotate_compile_flags` that a pass config stands for (our nvcc command line is built from the
# options; a flag not listed here is kept on the kernel and not passed on)
FLAG_CONFIGS = {"--use_fast_math": "tl.enable_fast_math", "-use_fast_math": "tl.enable_fast_math"}


def warn_deprecated_configs(pass_configs) -> None:
    """One DeprecationWarning for each deprecated key among `pass_configs` (TileLang's warning at the JIT entry)."""
    import warnings

    for key in pass_configs or ():
        message = DEPRECATED_CONFIGS.get(str(getattr(key, "value", key)))
        if message is not None:
            warnings.warn(message, DeprecationWarning, stacklevel=3)


def kernel_configs(func) -> dict:
    """A kernel's pass configs for `codegen_options`: `func.pass_configs`, plus those its compile flags stand for."""
    implied = {FLAG_CONFIGS[f]: True for f in getattr(func, "compile_flags", ()) if f in FLAG_CONFIGS}
    return {**implied, **dict(func.pass_configs)}


def pass_config_key(member: str) -> str:
    """The config string of `tilelang.PassConfigKey.<member>` ("TL_ENABLE_FAST_MATH" -> "tl.enable_fast_math")."""
    return _KEY_SPELLINGS.get(member, "tl." + member.lower().removeprefix("tl_"))


@dataclass(frozen=True)
class CodegenOptions:
    """How one kernel's code is generated (defaults: TileLang's defaults and this compiler's measured choices)."""

    fast_math: bool = False        # nvcc --use_fast_math and fp32 exp2 as ex2.approx.ftz
    fast_exp2: bool = False        # fp32 exp2 as ex2.approx.ftz without the rest of fast math
    wgmma: bool = True             # Hopper wgmma gemms on sm_90a (else mma.sync)
    tma: bool = True               # TMA loads in a warp-specialised pipeline (else the cp.async pipeline)
    warp_specialized: bool = True  # a TMA producer warpgroup beside the consumers
    loop_unswitching: bool = True  # a masked fill split into plain / masked blocks (flash attention's causal mask)
    safe_memory: bool = True       # a kernel's own global element accesses guarded by the tensor's extents
    persistent: bool = True        # persistent tile loops for warp-specialised GEMMs
    tma_store: bool = True         # the epilogue through a shared staging tile and TMA stores
    warpgroup_epilogue: bool = True  # each consumer warpgroup stores its own row bands
    stream_k: bool = True          # stream-K split of a partial last wave
    heavy_first: bool = True       # blocks with the most work launched first (causal attention)
    cluster: int = 0               # thread-block clusters: 2 turns clusters of two on
    wgmma_in_flight: str = "auto"  # keep wgmma k in flight across the loop: "auto", "on", "off"
    attn_overlap: str = "auto"     # FA3-style softmax / GEMM overlap: "auto", "on", "off"
    attn_pingpong: bool = True     # two consumer warpgroups alternate their GEMMs
    attn_kv_barriers: str = "auto"  # separate K and V mbarriers: "auto", "on", "off"


def _off(value: str) -> bool:
    return value == "0"


def _set(value: str) -> bool:
    return value not in ("", "0")


def _tri(value: str) -> str:
    return {"1": "on", "0": "off"}.get(value, "auto")


# TILELSP_* environment overrides (docs/options.md): variable -> (field, its value from the variable's text)
ENV_OVERRIDES = {
    "TILELSP_DISABLE_WGMMA": ("wgmma", lambda v: not _set(v)),
    "TILELSP_DISABLE_TMA": ("tma", lambda v: not _set(v)),
    "TILELSP_FAST_EXP2": ("fast_exp2", lambda v: v == "1"),
    "TILELSP_PERSISTENT": ("persistent", lambda v: not _off(v)),
    "TILELSP_TMA_STORE": ("tma_store", lambda v: not _off(v)),
    "TILELSP_WG_EPILOGUE": ("warpgroup_epilogue", lambda v: not _off(v)),
    "TILELSP_STREAM_K": ("stream_k", lambda v: not _off(v)),
    "TILELSP_HEAVY_FIRST": ("heavy_first", lambda v: not _off(v)),
    "TILELSP_CLUSTER": ("cluster", lambda v: int(v) if v.isdigit() else 0),
    "TILELSP_WGMMA_INFLIGHT": ("wgmma_in_flight", _tri),
    "TILELSP_ATTN_OVERLAP": ("attn_overlap", _tri),
    "TILELSP_ATTN_PINGPONG": ("attn_pingpong", lambda v: not _off(v)),
    "TILELSP_ATTN_UNSWITCH": ("loop_unswitching", lambda v: not _off(v)),
    "TILELSP_ATTN_KV_BARRIERS": ("attn_kv_barriers", _tri),
}


def codegen_options(pass_configs=(), environ=None) -> CodegenOptions:
    """The options of a kernel: its pass configs (a dict or `PrimFunc.pass_configs`' pairs; a config counts when
    its value is true, as TileLang reads them), then the TILELSP_* overrides set in `environ` (os.environ)."""
    configs = {getattr(k, "value", k): v for k, v in dict(pass_configs or {}).items()}  # PassConfigKey members too
    values = {name: on for key, (name, on) in PASS_CONFIGS.items() if bool(configs.get(key, False))}
    env = os.environ if environ is None else environ
    for var, (name, read) in ENV_OVERRIDES.items():
        text = env.get(var)
        if text is not None:
            values[name] = read(text.strip())
    return replace(CodegenOptions(), **values)


_CURRENT: contextvars.ContextVar[CodegenOptions | None] = contextvars.ContextVar("codegen_options", default=None)


@contextlib.contextmanager
def options_scope(options: CodegenOptions):
    """Lower inside this block with `options` in force (a context variable: concurrent builds do not share it)."""
    token = _CURRENT.set(options)
    try:
        yield options
    finally:
        _CURRENT.reset(token)


def current_options() -> CodegenOptions:
    """The options of the kernel being lowered (`options_scope`); outside one, the environment overrides alone."""
    found = _CURRENT.get()
    return found if found is not None else codegen_options()
