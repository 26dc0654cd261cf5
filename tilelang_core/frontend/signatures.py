"""Fallback signatures (TileLang 0.1.15) for the builtins the parser models, and argument binding.

Arguments are bound first against the language registry's entry; when that entry is missing or
rejects a call that real TileLang accepts, these signatures are tried, so a lagging catalog never
causes a false `bad-arguments`.
"""
from __future__ import annotations

import ast
from functools import lru_cache

from ..language.builtin import REQUIRED, BindError, Builtin, Param, bind

_SIGS = """
Kernel(*blocks, threads=None, prelude=None, cluster_dims=None, is_cpu=False)
alloc_shared(shape, dtype, scope='shared.dyn')
alloc_fragment(shape, dtype, scope='local.fragment')
alloc_local(shape, dtype, scope='local')
alloc_var(dtype, *args, scope='local.var', init=None)
Pipelined(start, stop=None, num_stages=0, order=None, stage=None, annotations=None)
Parallel(*extents, coalesced_width=None, loop_layout=None, prefer_async=None, annotations=None)
serial(start, stop=None, step=None, *, annotations=None)
unroll(start, stop=None, step=None, *, explicit=False, unroll_factor=None, annotations=None)
vectorized(start, stop=None, *, annotations=None)
grid(*extents)
range(start, stop=None, step=None)
copy(src, dst, *, coalesced_width=None, disable_tma=False, eviction_policy=None, prefer_instruction=None, annotations=None, loop_layout=None)
gemm(A, B, C, transpose_A=False, transpose_B=False, policy=None, clear_accum=False, k_pack=1, wg_wait=0, mbar=None, annotations=None)
clear(buffer, annotations=None)
fill(buffer, value, annotations=None)
reduce_max(buffer, out, dim=-1, clear=True, batch=1, nan_propagate=False, annotations=None)
cumsum(src, dst=None, dim=0, reverse=False)
atomic_add(dst, value, memory_order=None, return_prev=False, use_tma=False, annotations=None)
annotate_layout(layout_map)
use_swizzle(panel_size, order='row', enable=True)
if_then_else(cond, true_value, false_value)
cast(value, dtype)
infinity(dtype)
max_value(dtype)
min_value(dtype)
ceildiv(lhs, rhs)
Layout(shape, forward_fn)
Fragment(shape, forward_fn=None, forward_thread_fn=None, replicate=1, forward_index_fn=None)
"""
_ALIASES = {"reduce_min": "reduce_max", "reduce_sum": "reduce_max", "reduce_abssum": "reduce_max",
            "reduce_absmax": "reduce_max", "gemm_v1": "gemm", "gemm_v2": "gemm"}


@lru_cache(maxsize=None)
def _fallback() -> dict[str, Builtin]:
    out = {}
    for line in _SIGS.strip().splitlines():
        fn = ast.parse(f"def {line}: pass").body[0]
        out[fn.name] = Builtin("T." + fn.name, "fallback", tuple(_params(fn.args)))
    return out


def _params(a: ast.arguments):
    defaults = [REQUIRED] * (len(a.args) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    for p, d in zip(a.args, defaults):
        yield Param(p.arg, default=d)
    if a.vararg:
        yield Param(a.vararg.arg, variadic=True)
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        yield Param(p.arg, default=ast.literal_eval(d) if d is not None else REQUIRED, keyword_only=True)


def fallback_signature(short: str) -> Builtin | None:
    """The built-in fallback signature for a short builtin name."""
    return _fallback().get(_ALIASES.get(short, short))


def registry_entry(name: str) -> Builtin | None:
    """The language registry's entry for a canonical name, or None (also while the catalog is missing)."""
    try:
        from ..language.registry import registry

        return registry().get(name)
    except Exception:  # noqa: BLE001 - a catalog that fails to import must not break parsing
        return None


def catalog_available() -> bool:
    """True when the language catalog imports."""
    try:
        from ..language.registry import registry

        return bool(registry())
    except Exception:  # noqa: BLE001
        return False


def bind_call(name: str, short: str, args: list, kwargs: dict) -> dict:
    """Bind opaque args to the parser's parameter names (the fallback's); raises BindError.

    The registry's entry is tried too: a call either signature accepts is accepted, and the
    registry's message is preferred when both reject it.
    """
    entry, fallback = registry_entry(name), fallback_signature(short)
    if entry is not None and not entry.params:
        entry = None
    reg, reg_err = None, None
    if entry is not None:
        try:
            reg = bind(entry, args, kwargs)
        except BindError as exc:
            reg_err = exc
    if fallback is not None:
        try:
            return bind(fallback, args, kwargs)
        except BindError as exc:
            if reg is not None:
                return _rename(reg, entry, fallback)
            raise _better(reg_err, entry, kwargs) if reg_err else _better(exc, fallback, kwargs) from None
    if reg is not None:
        return reg
    if reg_err is not None:
        raise _better(reg_err, entry, kwargs)
    return {"__args__": args, **kwargs}


def _better(err: BindError, builtin: Builtin | None, kwargs: dict) -> BindError:
    """A BindError whose unknown-keyword hint is the closest parameter name (case-insensitive)."""
    if builtin is None:
        return err
    names = [p.name for p in builtin.params]
    for k in kwargs:
        if k not in names:
            from difflib import get_close_matches

            lowered = {n.lower(): n for n in names}
            close = get_close_matches(k.lower(), list(lowered), n=1, cutoff=0.6)
            hint = f" (did you mean {lowered[close[0]]!r}?)" if close else ""
            return BindError(f"{builtin.name} has no parameter {k!r}{hint}; see `{builtin.signature}`")
    return err


def _rename(bound: dict, entry: Builtin, fallback: Builtin) -> dict:
    """Registry-bound arguments renamed to the fallback's parameter names, position by position."""
    out = dict(bound)
    for mine, theirs in zip(fallback.params, entry.params):
        if theirs.name in bound and mine.name not in bound:
            out[mine.name] = bound[theirs.name]
    return out
