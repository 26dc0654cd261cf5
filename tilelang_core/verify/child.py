"""The verification worker: runs in a child process, loads the user's file (with `import tilelang` aliased),
builds each selected kernel instance, runs it on random inputs and compares with the reference.

Protocol: `python -m tilelang_core.verify.child REQUEST.json RESULT.jsonl`; one JSON result per line
is appended to RESULT.jsonl as soon as each instance finishes (so a timeout keeps earlier results).
"""
from __future__ import annotations

import inspect
import json
import re
import sys
import time
import traceback

_REF_COMMENT = re.compile(r"#\s*tilelsp:\s*reference\s*=\s*([A-Za-z_][A-Za-z0-9_]*)")
_LITERALS = (int, float, bool, str, type(None))


def reference_name(text: str) -> str:
    """The reference function's name: from a `# tilelsp: reference=NAME` comment, else `ref_program`."""
    m = _REF_COMMENT.search(text)
    return m.group(1) if m else "ref_program"


def _plain(v) -> bool:
    if isinstance(v, tuple):
        return all(_plain(x) for x in v)
    return isinstance(v, _LITERALS)


def _is_tensor_arg(v) -> bool:
    """An eager kernel's tensor parameter (bound to an unknown value by the checker, supplied at call time)."""
    return type(v).__name__ == "Unknown"


def _load_module(path: str) -> dict:
    """Execute the user's file as a module (not __main__) with the tilelang alias installed."""
    import os
    import runpy

    from ..alias import install_alias

    install_alias(force=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    return runpy.run_path(path, run_name="__tilelsp_verify__")


def _build(func, glb: dict, target: str):
    """The JITKernel of one statically found instance, built through the user's own factory."""
    from ..runtime.jit import JITFactory, JITKernel, compile

    kwargs = {k: v for k, v in func.bindings if _plain(v)}
    unknown = [k for k, v in func.bindings if not _plain(v) and not _is_tensor_arg(v)]
    if unknown and func.factory is not None:
        raise LookupError(f"factory argument(s) {', '.join(unknown)} of {func.factory} are not known statically; "
                          f"call it in the file (e.g. `kernel = {func.factory}(...)`) or add a comment "
                          f"`# tilelsp: {func.factory}({', '.join(k + '=...' for k in unknown)})`")
    if func.factory is None:
        obj = glb.get(func.name)
        return obj if isinstance(obj, JITKernel) else compile(obj, out_idx=func.out_idx, target=target)
    factory = glb.get(func.factory)
    if factory is None:
        raise LookupError(f"factory '{func.factory}' is not defined when the file runs")
    from ..runtime.eager import EagerKernel

    if isinstance(factory, EagerKernel):  # dims the checker knows stay symbolic: bound from the random inputs
        names = factory.signature.parameters
        eager = EagerKernel(factory.func, target=target)
        return eager.compile(**{k: v for k, v in kwargs.items() if k in names})
    if isinstance(factory, JITFactory):
        factory = JITFactory(factory.factory, out_idx=factory.out_idx, target=target)
        return factory(**kwargs)
    result = factory(**kwargs)
    return result if isinstance(result, JITKernel) else compile(result, out_idx=func.out_idx, target=target)


def _symbolic_dims(kernel) -> dict:
    return {d: 128 for p in kernel.params for d in p.shape if isinstance(d, str)}


def _call_reference(ref, inputs, bindings: dict):
    """Call the reference with the kernel inputs, plus keyword arguments named like factory parameters."""
    try:
        params = list(inspect.signature(ref).parameters.values())
    except (TypeError, ValueError):
        return ref(*inputs)
    extra = {p.name: bindings[p.name] for p in params[len(inputs):]
             if p.name in bindings and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return ref(*inputs, **extra)


def _outs(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def written_params(func) -> list[int]:
    """Positions of the tensor parameters a kernel writes (its in-place outputs when it has no out_idx)."""
    from ..ir import nodes as N
    from ..ir.visitor import walk

    dests = set()
    for n in walk(func.body):
        if isinstance(n, N.Store):
            dests.add(n.buffer)
        elif isinstance(n, (N.Copy, N.Fill, N.Reduce, N.CumSum, N.AtomicAdd)):
            dests.add(n.dst.buffer)
        elif isinstance(n, N.Gemm):
            dests.add(n.c.buffer)
    return [k for k, p in enumerate(func.params) if isinstance(p, N.Buffer) and p in dests]


def _execute(kernel, args: list, inplace: list[int]) -> list:
    """Run once; in-place outputs start from fresh zero copies, so every run sees the same state."""
    run = [a.clone() if k in inplace else a for k, a in enumerate(args)]
    result = kernel(*run)
    return _outs(result) if kernel.out_idx else [run[k] for k in inplace]


def verify_instance(func, glb: dict, ref, device: str, bench: bool, sanitize: bool = False) -> dict:
    """Build, run and compare one kernel instance (and run it sanitized on the CPU); returns the result record."""
    rec = _verify_instance(func, glb, ref, device, bench)
    if sanitize:
        from .sanitize import finding_dict, sanitize_kernel

        kernel = _build(func, glb, "cpu")
        args = random_inputs(kernel)
        findings = [finding_dict(d) for d in sanitize_kernel(kernel, args)]
        rec["sanitizer"] = findings
        problems = [f for f in findings if f["severity"] != "info"]  # info: a note (sanitize-sampled)
        if problems:
            what = "; ".join(f"line {f['line']}: [{f['code']}] {f['message']}" for f in problems)
            rec["message"] = f"the sanitizer found {len(problems)} problem(s): {what}" + (
                f" (numerics: {rec['message']})" if rec.get("message") else "")
            rec["passed"] = False
    return rec


def random_inputs(kernel) -> list:
    """Random inputs for a kernel's non-output parameters (in-place outputs zeroed), as verify uses them."""
    from ..runtime.profiler import Profiler

    args = Profiler(kernel)._inputs(_symbolic_dims(kernel))
    for k in ([] if kernel.out_idx else written_params(kernel.func)):
        args[k] = args[k].zero_()
    return args


def _verify_instance(func, glb: dict, ref, device: str, bench: bool) -> dict:
    from .bench import bench as bench_fn
    from .bench import time_once
    from .numerics import compare

    kernel = _build(func, glb, device)
    args = random_inputs(kernel)
    inplace = [] if kernel.out_idx else written_params(kernel.func)
    inputs = [a for k, a in enumerate(args) if k not in inplace]
    got = _execute(kernel, args, inplace)
    scratch = [a.clone() if k in inplace else a for k, a in enumerate(args)]  # timing must not touch `args`
    _, ms = time_once(lambda: _sync(kernel(*scratch), device))
    rec = {"time_ms": ms}
    if bench:
        rec["bench_ms"] = bench_fn(lambda: kernel(*scratch), warmup=5, rep=50, device=device, max_seconds=5.0)
    if ref is not None:
        expected = _outs(_call_reference(ref, inputs, dict(func.bindings)))
        source = "the reference"
    elif device != "cpu":
        cpu_kernel = _build(func, glb, "cpu")
        expected = _execute(cpu_kernel, [t.cpu() for t in args], inplace)
        source = "the CPU backend"
    else:
        rec.update(passed=True, max_abs_err=0.0, max_rel_err=0.0,
                   message="no reference function found (define ref_program or add `# tilelsp: reference=NAME`); "
                           "the kernel ran without errors but nothing was compared")
        return rec
    if len(expected) != len(got):
        rec.update(passed=False, max_abs_err=None, max_rel_err=None,
                   message=f"the kernel returned {len(got)} output(s) but {source} returned {len(expected)}")
        return rec
    results = []
    for k, (a, e) in enumerate(zip(got, expected)):
        outs = list(kernel.out_idx) or inplace
        name = kernel.params[outs[k]].name if k < len(outs) else f"#{k}"
        e = e.to(device=a.device, dtype=a.dtype) if hasattr(e, "to") else e
        results.append(compare(a, e, name=f"output '{name}'", scale_atol=True))
    passed = all(r.passed for r in results)
    msg = "; ".join(r.message for r in results if r.message) or f"matches {source}"
    rec.update(passed=passed, max_abs_err=max(r.max_abs_err for r in results),
               max_rel_err=max(r.max_rel_err for r in results), message=msg)
    return rec


def _sync(result, device):
    if device == "cuda":
        import torch

        torch.cuda.synchronize()
    return result


def _cuda_ok() -> bool:
    import torch

    return torch.cuda.is_available()


def _select(kernels, name: str | None):
    if not name:
        return kernels
    return [k for k in kernels if name in (k.name, k.factory)]


def run(request: dict, emit) -> None:
    """Verify every selected instance of request["file"], calling emit(record) for each."""
    from ..check import check_source
    from ..codes import CODES
    from ..passes.pipeline import tolerating
    from ..source import read_python_source
    from .sanitize import RUNTIME_CHECKED

    path = request["file"]
    if request["device"] == "auto":
        request = {**request, "device": "cuda" if _cuda_ok() else "cpu"}
    text = read_python_source(path)
    if isinstance(text, Exception):
        emit({"file": path, "device": request["device"], "kernel": request.get("kernel"), "instance": "",
              "passed": False, "usage": True, "message": f"cannot read {path}: {text}"})
        return
    result = check_source(text, path)
    chosen = _select(result.kernels, request.get("kernel"))
    base = {"file": path, "device": request["device"]}
    if not chosen:
        names = sorted({k.factory or k.name for k in result.kernels})
        emit({**base, "kernel": request.get("kernel"), "instance": "", "passed": False, "usage": True,
              "message": f"no kernel named {request.get('kernel')!r} in {path}" if request.get("kernel") else
              f"no kernels found in {path}", "available": names})
        return
    tolerated = RUNTIME_CHECKED if request.get("sanitize") else ()
    errors = [d for d in result.diagnostics if d.is_error and getattr(CODES.get(d.code), "area", "") not in tolerated]
    if request["device"] == "cuda" and not _cuda_ok():
        for func in chosen:
            emit({**base, "kernel": func.name, "instance": func.instance, "passed": False,
                  "message": "no CUDA device is visible to torch; use --device cpu (or auto)"})
        return
    try:
        with tolerating(tolerated):  # the file may build its kernels when it loads
            glb = _load_module(path)
    except BaseException as exc:  # the user's module failed while loading: every instance fails with it
        if isinstance(exc, KeyboardInterrupt):
            raise
        for func in chosen:
            emit({**base, "kernel": func.name, "instance": func.instance, "passed": False,
                  "message": "running the file failed: " + _describe(exc, path)})
        return
    ref = glb.get(reference_name(text))
    ref = ref if callable(ref) else None
    for func in chosen:
        rec = {**base, "kernel": func.name, "instance": func.instance}
        mine = [d for d in errors if d.kernel in (None, func.name)]
        if mine:
            d = mine[0]
            emit({**rec, "passed": False, "message": f"{path}:{d.span.line}:{d.span.col + 1}: error[{d.code}] "
                  f"{d.message}"})
            continue
        start = time.perf_counter()
        try:
            with tolerating(tolerated):
                rec.update(verify_instance(func, glb, ref, request["device"], request.get("bench", False),
                                           request.get("sanitize", False)))
        except Exception as exc:  # user code and builds may fail in any way: report, go on
            rec.update(passed=False, message=_describe(exc, path))
        rec["total_s"] = round(time.perf_counter() - start, 3)
        emit(rec)


def _describe(exc: Exception, path: str) -> str:
    from ..diagnostics import CompileError

    if isinstance(exc, CompileError):
        return str(exc)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    where = f" ({path}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def main(argv: list[str]) -> int:
    """Child entry point: read the request, append one JSON line per instance to the result file."""
    request_path, result_path = argv[0], argv[1]
    with open(request_path, encoding="utf-8") as fh:
        request = json.load(fh)

    def emit(rec: dict) -> None:
        with open(result_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(rec, default=str) + "\n")

    run(request, emit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
