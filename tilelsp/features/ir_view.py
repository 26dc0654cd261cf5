"""The kernel list and the IR views: `tilelsp/kernels` (pure) and lowering for showIR / on-save (worker side).

`handle(request)` is what the worker process runs; it imports tvm (through `tilelang_core.lower`)
lazily and keeps the last few LowerResults, so a second stage of the same kernel is instant.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

from tilelang_core.lowering import stage_names
from tilelang_core.source import span_union
from tilelang_core.target import DEFAULT_ARCH, canonical

LANGUAGE_IDS = {"cuda": "cuda", "llvm": "llvm", "tir": "tvmscript"}


def stages_for(target: str) -> tuple[str, ...]:
    """The stage names a target's lowering produces (no tvm import)."""
    return stage_names(target)


def kernels_payload(result, target: str, to_range) -> list[dict]:
    """`tilelsp/kernels` entries: one per kernel name (range = the whole def, nameRange = its name), with its
    instances and stage names."""
    out: dict[str, dict] = {}
    for k in getattr(result, "kernels", None) or ():
        span, name_span = getattr(k, "span", None), getattr(k, "name_span", None) or getattr(k, "span", None)
        if span is None:
            continue
        body = getattr(getattr(k, "body", None), "span", None)
        whole = span_union(span, body) if body is not None else span  # def line .. end of the body
        entry = out.setdefault(k.name, {"name": k.name, "factory": k.factory, "range": to_range(whole),
                                        "nameRange": to_range(name_span), "instances": [],
                                        "stages": list(stages_for(target))})
        if k.instance and k.instance not in entry["instances"]:
            entry["instances"].append(k.instance)
    return list(out.values())


# --- worker side ---------------------------------------------------------------------------------

_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 16


def _span_dict(span):
    return None if span is None else [span.line, span.col, span.end_line, span.end_col]


def diag_dict(d) -> dict:
    """A Diagnostic as JSON-able data (for the worker protocol)."""
    return {"code": d.code, "severity": d.severity.value, "message": d.message, "span": _span_dict(d.span),
            "related": [[_span_dict(r.span), r.message] for r in d.related], "kernel": d.kernel,
            "instance": d.instance, "target": d.target,
            "data": {k: v for k, v in d.data.items() if isinstance(v, (int, float, str, bool, type(None)))}}


def diag_from_dict(data: dict):
    """The inverse of `diag_dict`."""
    from tilelang_core.diagnostics import Diagnostic, Related, Severity
    from tilelang_core.source import Span

    return Diagnostic(data["code"], Severity(data["severity"]), data["message"], Span(*data["span"]),
                      related=tuple(Related(Span(*s), m) for s, m in data.get("related") or ()),
                      kernel=data.get("kernel"), instance=data.get("instance"), target=data.get("target"),
                      data=data.get("data") or {})


def _funcs(req) -> list:
    from tilelang_core.check import check_source

    result = check_source(req["text"], req.get("path", "<string>"), tuple(req.get("targets") or (DEFAULT_ARCH,)))
    funcs = [f for f in result.kernels if req.get("kernel") in (None, f.name)]
    if req.get("instance"):
        funcs = [f for f in funcs if f.instance == req["instance"]] or funcs[:1]
    return funcs


def _lower(func, target: str, text: str, until=None):
    import tilelang_core
    from tilelang_core.options import codegen_options

    key = (hashlib.sha1(text.encode()).hexdigest(), func.name, func.instance, target, until, codegen_options())
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    res = tilelang_core.lower(func, target=target, until=until)
    _CACHE[key] = res
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return res


def _failure(func, target: str, exc: Exception) -> list[dict]:
    from tilelang_core.diagnostics import CompileError, Diagnostic, Severity

    if isinstance(exc, CompileError) and exc.diagnostics:
        return [diag_dict(d) for d in exc.diagnostics]
    code = "lowering-unsupported" if isinstance(exc, NotImplementedError) else "codegen-error"
    msg = f"lowering kernel `{func.name}` for {target} failed: {type(exc).__name__}: {exc}"
    span = func.name_span or func.span
    return [diag_dict(Diagnostic(code, Severity.ERROR, msg, span, kernel=func.name, instance=func.instance,
                                 target=target))]


def _smem_report(func, target: str, res) -> dict | None:
    from tilelang_core.diagnostics import Diagnostic, Severity

    smem = getattr(res, "smem_bytes", None)
    if smem is None or canonical(target) == "cpu":
        return None
    msg = (f"kernel `{func.name}` allocates {smem:,} B ({smem / 1024:.1f} KiB) of shared memory on {target} "
           "after merging and multi-buffering")
    return diag_dict(Diagnostic("shared-memory-report", Severity.INFO, msg, func.name_span or func.span,
                                kernel=func.name, instance=func.instance, target=target, data={"bytes": smem}))


def lower_file(req) -> dict:
    """Lower every kernel instance for every target: entries (per kernel/target) and diagnostics."""
    entries, diags = [], []
    for func in _funcs(req):
        for target in req.get("targets") or (DEFAULT_ARCH,):
            try:
                res = _lower(func, target, req["text"])
            except Exception as exc:  # noqa: BLE001 - every failure becomes a diagnostic
                diags.extend(_failure(func, target, exc))
                entries.append({"kernel": func.name, "instance": func.instance, "target": target, "error": str(exc)})
                continue
            report = _smem_report(func, target, res)
            diags.extend([report] if report else [])
            stages = dict(getattr(res, "stages", {}) or {})
            entries.append({"kernel": func.name, "instance": func.instance, "target": target,
                            "smem_bytes": getattr(res, "smem_bytes", None), "tir": stages.get("tir"),
                            "launch": _jsonable(getattr(res, "launch", None)),
                            "cuda": stages.get("cuda") or stages.get("llvm"),
                            "layouts": layouts_from_text(stages.get("layouts") or ""),
                            "line_map": [[src, lines] for src, lines in getattr(res, "line_map", None) or ()],
                            **_layout_notes(func, target)})
    return {"entries": entries, "diagnostics": diags}


def _layout_notes(func, target: str) -> dict:
    """The hover's extras from the lowering's plan: per-gemm choices and a layout picture per buffer."""
    if target in ("cpu", "llvm"):
        return {}
    from .layout_maps import gemm_notes
    from .layout_view import hover_notes

    try:
        gemms = gemm_notes(func, target)
    except Exception:  # noqa: BLE001 - the lowering already succeeded; a plan it could not describe stays silent
        gemms = []
    return {"gemms": gemms, **hover_notes(func, target)}


def _jsonable(value):
    """Launch data as JSON-able values (tuples -> lists, anything else -> str)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, (int, float, str, bool, type(None))) else str(value)


def layouts_from_text(text: str) -> dict[str, str]:
    """Per-buffer layout notes from the `layouts` stage's header (`# NAME: description` lines)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("# "):
            if line.strip():
                break
            continue
        name, sep, desc = line[2:].partition(": ")
        if sep and name.isidentifier():
            out[name] = f"{out[name]}; {desc}" if name in out else desc
    return out


def show_ir(req) -> dict:
    """The text of one stage of one kernel, and the source -> output line map for the final stage."""
    funcs = _funcs(req)
    if not funcs:
        raise LookupError(f"no kernel named {req.get('kernel')!r} in this file")
    func, target, stage = funcs[0], req.get("target") or DEFAULT_ARCH, req.get("stage") or "cuda"
    if stage not in stages_for(target):
        raise LookupError(f"unknown stage {stage!r} for {target}; stages: {', '.join(stages_for(target))}")
    try:
        res = _lower(func, target, req["text"])
    except Exception:
        res = _lower(func, target, req["text"], until=stage)
    text = (res.stages or {}).get(stage) or (res.source if stage in ("cuda", "llvm") else "")
    line_map = []
    if stage in ("cuda", "llvm"):
        line_map = [{"source": src - 1, "lines": [n - 1 for n in lines]} for src, lines in (res.line_map or [])]
    return {"text": text, "languageId": LANGUAGE_IDS.get(stage, "python"), "stage": stage, "kernel": func.name,
            "target": target, "instance": func.instance, "lineMap": line_map}


def handle(req: dict):
    """Dispatch one worker request by its `op`."""
    op = req.get("op")
    if op == "ping":
        return "pong"
    if op == "warm":
        from tilelang_core.codegen.tvm_loader import load

        load()  # import tvm once, ahead of the first save
        return "warm"
    if op == "lower":
        return lower_file(req)
    if op == "show_ir":
        return show_ir(req)
    if op == "layout":
        from .layout_view import layout_request

        return layout_request(req, _funcs(req))
    raise ValueError(f"unknown worker op {op!r}")
