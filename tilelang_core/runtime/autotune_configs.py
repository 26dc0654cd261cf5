"""Config generation for GEMM-like kernel factories: the carver's tile hints as autotune configs.

`gemm_configs(M, N, K)` turns `MatmulTemplate(...).recommend_hints()` (compat/carver_template.py) into dicts
of the keyword arguments GEMM factories take (block_M, block_N, block_K, num_stages, threads), adds pipeline
depths around each hint, and keeps the first `topk`. `fit_configs` drops keys a factory does not take.
"""
from __future__ import annotations

import inspect

GEMM_KEYS = ("block_M", "block_N", "block_K", "num_stages", "threads")


def gemm_configs(M: int, N: int, K: int, in_dtype: str = "float16", topk: int = 16, arch=None,
                 stages=(2, 3, 4)) -> list[dict]:
    """Up to `topk` distinct GEMM configs: every hint (best-ranked first) at its own pipeline depth, then at the
    other depths in `stages`."""
    from ..compat.carver_template import MatmulTemplate

    template = MatmulTemplate(M=M, N=N, K=K, in_dtype=str(in_dtype), trans_B=False)
    if arch is not None:
        template.with_arch(arch)
    hints = template.recommend_hints(topk=max(topk, 8))
    out, seen = [], set()
    for rank in range(len(stages) + 1):  # every hint at its own depth first, then the other depths in turn
        for hint in hints:
            depths = sorted({*stages, hint.pipeline_stage}, key=lambda s: (abs(s - hint.pipeline_stage), s))
            if rank >= len(depths):
                continue
            config = {"block_M": hint.block[0], "block_N": hint.block[1], "block_K": hint.rstep[0],
                      "num_stages": depths[rank], "threads": max(128, hint.threads)}
            key = tuple(config.values())
            if key not in seen:
                seen.add(key)
                out.append(config)
    return out[:topk]


def is_gemm_like(factory) -> bool:
    """True when a factory takes block_M, block_N and block_K (the configs above fit it)."""
    return {"block_M", "block_N", "block_K"} <= set(_parameters(factory))


def fit_configs(factory, configs: list[dict]) -> list[dict]:
    """The configs with only the keyword arguments `factory` accepts, duplicates removed, order kept."""
    params = _parameters(factory)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    out, seen = [], set()
    for config in configs:
        kept = {k: v for k, v in config.items() if accepts_any or k in params}
        key = tuple(sorted(kept.items()))
        if key not in seen:
            seen.add(key)
            out.append(kept)
    return out


def _parameters(factory) -> dict:
    fn = getattr(factory, "factory", None) or getattr(factory, "__wrapped__", None) or factory
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}
