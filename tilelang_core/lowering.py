"""The lowering driver, above the passes and codegen: `lower(func, target, until)` keeps every stage's text.

CUDA targets: parsed -> legalized -> pipelined -> layouts -> lowered -> tir -> cuda.
CPU ("cpu"/"llvm"): parsed -> legalized -> tir -> llvm (the CPU backend's to_tir/build).
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

from .lower_trace import trace_lowering
from .diagnostics import CompileError, Diagnostic, DiagnosticSink, Severity, internal_message, sorted_diagnostics
from .options import codegen_options, kernel_configs, options_scope
from .target import DEFAULT_ARCH, canonical

CUDA_STAGES = ("parsed", "legalized", "pipelined", "layouts", "lowered", "tir", "cuda")
CPU_STAGES = ("parsed", "legalized", "tir", "llvm")


@dataclass
class LowerResult:
    """Stage texts (ordered) and, when the last stage ran, the final source and launch data."""

    target: str
    stages: dict = field(default_factory=dict)
    source: str = ""
    line_map: list = field(default_factory=list)
    smem_bytes: int | None = None
    launch: dict | None = None
    params: list = field(default_factory=list)
    smem_breakdown: list = field(default_factory=list)


def stage_names(target=DEFAULT_ARCH) -> tuple[str, ...]:
    """Stage names for a target, in order."""
    return CPU_STAGES if canonical(target) == "cpu" else CUDA_STAGES


_TOLERATED: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("tolerated_areas", default=())


@contextlib.contextmanager
def tolerating(areas: tuple[str, ...]):
    """Within the block, refuse_errors lets errors of these code areas through (the sanitizer runs kernels the
    static `dataflow` checks reject, to observe the same bugs at run time)."""
    token = _TOLERATED.set(tuple(areas))
    try:
        yield
    finally:
        _TOLERATED.reset(token)


def tolerated_areas() -> tuple[str, ...]:
    """The code areas refuse_errors lets through here (empty outside `tolerating`)."""
    return _TOLERATED.get()


CPU_TOLERATED_CODES = ("gemm-operand-scope",)  # TileLang's CPU target multiplies tiles of any scope (GemmScalar)


def refuse_errors(func, target) -> None:
    """The gate in front of every lowering (lower, artifacts, the JIT, verify): CompileError with the frontend's
    and the checks' errors for this instance on this target, so nothing the checks reject becomes code.
    GPU budgets (area `resources`) and tensor-core operand scopes do not bind the CPU backend. Inline `# tilelsp: ignore` hides a diagnostic
    from reports but does not make an erroneous kernel lowerable."""
    from .analysis import analyze
    from .codes import CODES
    from .passes.wgmma_check import check_wgmma_gemms

    arch = canonical(target)
    sink = DiagnosticSink()
    analyze([func], () if arch == "cpu" else (arch,), sink)
    check_wgmma_gemms(func, arch, sink)  # on the CPU too, judged for sm_90a: TileLang has no fallback for it
    skip = _TOLERATED.get() + (("resources",) if arch == "cpu" else ())
    found = [d for d in sink.items if d.is_error and getattr(CODES.get(d.code), "area", "") not in skip
             and not (arch == "cpu" and d.code in CPU_TOLERATED_CODES)]
    errors = list(func.errors) + [d for d in found if d not in func.errors]
    if errors:
        raise CompileError(sorted_diagnostics(errors), func.source_path)


class _Internal(Exception):
    code = "internal-error"

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.span = span


def _construct_span(exc: BaseException):
    """The span of the innermost IR node being lowered when `exc` was raised (a local named like a node)."""
    tb, span = exc.__traceback__, None
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            s = getattr(value, "span", None)
            if type(s).__name__ == "Span" and type(value).__module__.endswith("ir.nodes"):
                span = s
        tb = tb.tb_next
    return span


def _tvm_summary(message: str) -> str:
    """TVM's failure without its internal 'Check failed' wording: the condition and its note, one line."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    line = next((ln for ln in lines if "Check failed" in ln), lines[-1] if lines else "")
    line = line.split("Check failed:", 1)[-1].strip()
    return line[:200] or "no detail"


def _internal(exc: BaseException, arch: str) -> _Internal:
    """An unexpected failure while lowering, as an internal-error at the construct being lowered."""
    text = str(exc)
    if "Check failed" in text or type(exc).__module__.startswith("tvm"):
        message = (f"TVM rejected the {arch} lowering of this construct ({_tvm_summary(text)}); this is a "
                   "tilelsp bug, not yours: please report it with this kernel")
    else:
        message = internal_message(f"in the {arch} lowering", exc)
    return _Internal(message, _construct_span(exc))


def _error(func, exc, target: str) -> CompileError:
    span = getattr(exc, "span", None) or func.span
    code = getattr(exc, "code", "lowering-unsupported")
    diag = Diagnostic(code, Severity.ERROR, str(exc), span, kernel=func.name, instance=func.instance, target=target)
    return CompileError([diag], func.source_path)


@contextlib.contextmanager
def user_errors(func, arch: str):
    """Turn any lowering failure inside the block into a CompileError at the user's line (internal ones say so)."""
    try:
        yield
    except CompileError:
        raise
    except ImportError:  # tvm missing or the wrong version: its own clear message
        raise
    except Exception as exc:  # LoweringError and friends carry span/code; anything else is our bug
        known = type(exc).__name__ in ("LoweringError", "LayoutError", "NvccError") or type(exc) is ValueError
        if not known or "Check failed" in str(exc):
            exc = _internal(exc, arch)
        raise _error(func, exc, arch) from exc


def lower(func, target=DEFAULT_ARCH, until: str | None = None) -> LowerResult:
    """Run the pipeline up to `until` (all stages by default) on a kernel the checks accept (`target`: any spelling
    `target.parse_target` reads); the checks' errors and lowering failures raise CompileError at the user's line."""
    arch = canonical(target)
    names = stage_names(arch)
    if until is not None and until not in names:
        raise ValueError(f"unknown stage {until!r} for target {arch}; stages: {', '.join(names)}")
    refuse_errors(func, arch)
    result = LowerResult(arch)
    try:
        with user_errors(func, arch):
            if arch == "cpu":
                _lower_cpu(func, result, until)
            else:
                with options_scope(codegen_options(kernel_configs(func))):  # the kernel's options in every stage
                    _lower_cuda(func, arch, result, until)
    finally:  # a failed lowering's trace shows the stages it got through
        trace_lowering(func.name, arch, result.stages)
    return result


_STAGE_DONE: contextvars.ContextVar = contextvars.ContextVar("stage_done", default=None)


@contextlib.contextmanager
def reporting_stages(callback):
    """Within the block, `callback(stage_name)` runs as each stage's text is ready (progress for long lowerings)."""
    token = _STAGE_DONE.set(callback)
    try:
        yield
    finally:
        _STAGE_DONE.reset(token)


def _stage(result: LowerResult, name: str, text: str, until) -> bool:
    result.stages[name] = text
    done = _STAGE_DONE.get()
    if done is not None:
        done(name)
    return until == name


def _lower_cuda(func, arch: str, result: LowerResult, until) -> None:
    from .codegen import cuda
    from .codegen.cuda.lpt import note as lpt_note
    from .codegen.cuda.overlap import stage_note
    from .codegen.cuda.split import split_kernels
    from .passes.ir_text import func_str
    from .passes.layouts import describe
    from .passes.legalize import legalize
    from .passes.plan import fp8_gemm_notes, plan_pipelines

    if _stage(result, "parsed", func_str(func), until):
        return
    if cuda.source_launch(func) is not None:  # T.CUDASourceCodeKernel: the user's CUDA source is the kernel
        _source_kernel_stages(func, arch, result, until)
        return
    func = legalize(func)
    if _stage(result, "legalized", func_str(func), until):
        return
    plans = plan_pipelines(func)
    notes = {id(p.loop): p.describe() for p in plans.values()}
    if _stage(result, "pipelined", func_str(func, notes), until):
        return
    parts = split_kernels(func)
    kernel_plans = [cuda.plan_kernel(part.func, arch) for part in parts]  # once per kernel: every stage reads it
    texts = []
    for part, kp in zip(parts, kernel_plans):
        texts.append(_kernel_header(part, parts) + describe(kp.layouts) + "".join(
            f"\n# {b.name}: shared tile, {'wgmma 128-byte-swizzled atoms' if kind == 'atoms' else 'swizzled rows'}"
            for b, kind in kp.swizzled.items()))
        texts[-1] += fp8_gemm_notes(part.func, arch, kp.wgmma)
        ws = kp.ws
        texts[-1] += (f"\n{ws.describe()}" if ws is not None else "") + stage_note(ws, kp.wgmma)
        texts[-1] += "" if ws is not None and ws.persistent is not None else lpt_note(part.func.launch)
    if _stage(result, "layouts", "\n".join(texts) + "\n\n" + func_str(func, notes), until):
        return
    lowered = [cuda.tvmscript(part.func, arch, kp) for part, kp in zip(parts, kernel_plans)]
    if _stage(result, "lowered", "\n".join(_kernel_header(part, parts) + script for part, (script, _, _)
                                           in zip(parts, lowered)), until):
        return
    ck = cuda.generate(func, arch, (parts, lowered))
    if _stage(result, "tir", ck.tir, until):
        return
    _stage(result, "cuda", ck.source, until)
    result.source, result.line_map, result.smem_bytes = ck.source, ck.line_map, ck.smem_bytes
    result.launch = {"grid": ck.grid, "block": ck.block, "dynamic_smem": ck.smem_bytes}
    if ck.launches:
        result.launch["kernels"] = [{"symbol": s["kernel_symbol"], "grid": s["grid"], "block": s["block"],
                                     "dynamic_smem": s["smem_bytes"]} for s in ck.launches]
        result.launch["workspaces"] = ck.workspaces
        result.smem_bytes = max(s["smem_bytes"] for s in ck.launches)  # the kernel that needs the most
    result.params, result.smem_breakdown = ck.params, ck.smem_breakdown


def _source_kernel_stages(func, arch: str, result: LowerResult, until) -> None:
    """The stages of a T.CUDASourceCodeKernel launch: nothing to plan or lower; the cuda stage is the user's source."""
    from .codegen import cuda

    ck = cuda.generate(func, arch)
    for name in ("legalized", "pipelined", "layouts", "lowered", "tir"):
        if _stage(result, name, f"# T.CUDASourceCodeKernel: the kernel is the user's CUDA source (entry "
                  f"{ck.kernel_symbol}); no {name} stage", until):
            return
    _stage(result, "cuda", ck.source, until)
    result.source, result.params, result.smem_bytes = ck.source, ck.params, 0
    result.launch = {"grid": ck.grid, "block": ck.block, "dynamic_smem": 0}


def _kernel_header(part, parts: list) -> str:
    """`# kernel k of n` before each kernel's text when a prim_func launches several ('' for one)."""
    if len(parts) == 1:
        return ""
    spaces = ", ".join(b.name for b in part.workspaces)
    return (f"# kernel {parts.index(part)} of {len(parts)}: {part.func.name}"
            + (f" (workspaces: {spaces})" if spaces else "") + "\n")


def _lower_cpu(func, result: LowerResult, until) -> None:
    from .codegen import cpu
    from .passes.ir_text import func_str
    from .passes.legalize import legalize

    if _stage(result, "parsed", func_str(func), until):
        return
    if _stage(result, "legalized", func_str(legalize(func)), until):
        return
    tir = cpu.to_tir(func)
    text = tir.script() if hasattr(tir, "script") else str(tir)
    if _stage(result, "tir", text, until):
        return
    built = cpu.build(func)
    llvm = _llvm_text(built)
    _stage(result, "llvm", llvm, until)
    result.source = llvm


def _llvm_text(built) -> str:
    if hasattr(built, "llvm_ir"):
        ir = built.llvm_ir
        return ir() if callable(ir) else ir
    for obj in (built, getattr(built, "mod", None), getattr(built, "executable", None)):
        if obj is None:
            continue
        for attr in ("inspect_source", "get_source"):
            fn = getattr(obj, attr, None)
            if fn is not None:
                try:
                    return fn("ll")
                except Exception:  # noqa: BLE001 - try the next form
                    continue
    mod = getattr(getattr(built, "mod", None), "mod", None)
    if mod is not None and hasattr(mod, "inspect_source"):
        return mod.inspect_source("ll")
    return str(built)
