"""The verification worker: runs in a child process, loads the user's file (with `import tilelang` aliased),
builds each selected kernel instance, runs it on random inputs and compares with the reference.

Protocol: `python -m tilelang_core.verify.child REQUEST.json RESULT.jsonl`; one JSON result per line
is appended to RESULT.jsonl as soon as each instance finishes (so a timeout keeps earlier results).
"""
from __future__ import annotations

import inspect
import json
import sys
import time
import traceback

from ..runtime.user_file import load_module, plain_value, reference_name


def _is_tensor_arg(v) -> bool:
    """An eager kernel's tensor parameter (bound to an unknown value by the checker, supplied at call time)."""
    return type(v).__name__ == "Unknown"


def build_instance(func, glb: dict, target: str):
    """The JITKernel of one statically found instance, built through the user's own factory."""
    from ..runtime.jit import JITFactory, JITKernel, compile

    kwargs = {k: v for k, v in func.bindings if plain_value(v)}
    unknown = [k for k, v in func.bindings if not plain_value(v) and not _is_tensor_arg(v)]
    if unknown and func.factory is not None:
        from .capture import captured_call

        call = captured_call(glb, func.name)  # the file computes them at run time: run it up to the kernel's call
        if call is not None:
            return compile(call.kernel.func, out_idx=call.kernel.out_idx, target=target)
        raise LookupError(f"factory argument(s) {', '.join(unknown)} of {func.factory} are not known statically; "
                          f"call it in the file's main() (e.g. `kernel = {func.factory}(...)`) or add a comment "
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
        eager = EagerKernel(factory.func.pyfunc, target=target)  # .func is TileLang's ArgumentBinder
        return eager.compile(**{k: v for k, v in kwargs.items() if k in names})
    if isinstance(factory, JITFactory):
        factory = JITFactory(factory.factory, out_idx=factory.out_idx, target=target)
        return factory(**kwargs)
    result = factory(**kwargs)
    return result if isinstance(result, JITKernel) else compile(result, out_idx=func.out_idx, target=target)


def symbolic_dims(kernel) -> dict:
    return {d: 128 for p in kernel.params for d in p.shape if isinstance(d, str)}


def call_reference(ref, inputs, bindings: dict):
    """Call the reference with the kernel inputs, plus keyword arguments named like factory parameters."""
    try:
        params = list(inspect.signature(ref).parameters.values())
    except (TypeError, ValueError):
        return ref(*inputs)
    extra = {p.name: bindings[p.name] for p in params[len(inputs):]
             if p.name in bindings and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return ref(*inputs, **extra)


def outputs(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def written_params(func) -> list[int]:
    """Positions of the tensor parameters a kernel writes (its in-place outputs when it has no out_idx)."""
    from ..ir import nodes as N
    from ..ir.visitor import walk
    from .index_uses import written_buffer

    dests = {written_buffer(n) for n in walk(func.body)}
    return [k for k, p in enumerate(func.params) if isinstance(p, N.Buffer) and p in dests]


def execute(kernel, args: list, inplace: list[int]) -> list:
    """Run once; in-place outputs start from fresh zero copies, so every run sees the same state."""
    run = [a.clone() if k in inplace else a for k, a in enumerate(args)]
    result = kernel(*run)
    return outputs(result) if kernel.out_idx else [run[k] for k in inplace]


def verify_instance(func, glb: dict, ref, device: str, bench: bool, sanitize: bool = False,
                    contract=None, metamorphic_text: str | None = None) -> dict:
    """Build, run and compare one kernel instance (and run it sanitized on the CPU); returns the result record.
    `contract` (an InputContract) gives the integer tensors the kernel indexes with their values; with
    `metamorphic_text` (the file's text) the reference-free oracles run too."""
    rec = _verify_instance(func, glb, ref, device, bench, contract)
    if metamorphic_text is not None:
        meta = metamorphic_instance(func, glb, metamorphic_text, contract)
        rec["metamorphic"] = meta
        if meta["findings"]:
            what = "; ".join(f"line {f['line']}: [{f['code']}] {f['message']}" for f in meta["findings"])
            rec["message"] = f"the metamorphic oracles found {len(meta['findings'])} problem(s): {what}" + (
                f" (numerics: {rec['message']})" if rec.get("message") else "")
            rec["passed"] = False
    if sanitize:
        from .sanitize import finding_dict, sanitize_kernel

        kernel = build_instance(func, glb, "cpu")
        args, sources = kernel_inputs(kernel, func, contract)
        findings = [finding_dict(d) for d in sanitize_kernel(kernel, args, sources)]
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

    args = Profiler(kernel)._inputs(symbolic_dims(kernel))
    for k in ([] if kernel.out_idx else written_params(kernel.func)):
        args[k] = args[k].zero_()
    return args


def metamorphic_instance(func, glb: dict, text: str, contract=None) -> dict:
    """The reference-free oracles on the CPU backend (verify/metamorphic.py): the instance at other tile, stage and
    thread configurations, and with one row block of its inputs perturbed; the record's `metamorphic` entry."""
    import dataclasses

    from .metamorphic import config_findings, row_findings
    from .sanitize import finding_dict, sanitize_kernel

    kernel = build_instance(func, glb, "cpu")
    args, sources = kernel_inputs(kernel, func, contract)
    inplace = [] if kernel.out_idx else written_params(kernel.func)
    names = [kernel.params[k].name for k in (kernel.out_idx or inplace)]
    base = execute(kernel, args, inplace)

    def build(bindings: dict):
        return build_instance(dataclasses.replace(func, bindings=tuple(bindings.items())), glb, "cpu")

    def sanitize(variant):
        return sanitize_kernel(variant, list(args), sources)

    found, ran = config_findings(func, kernel.func, glb.get(func.factory or ""), build,
                                 lambda k: execute(k, args, inplace), base, names, sanitize)
    positions = {p.name: k for k, p in enumerate(q for q in kernel.params if not q.is_output)}
    rows, perturbed = row_findings(func, text, kernel, args, lambda k, a: execute(k, a, inplace), base, names,
                                   positions)
    return {"configs": ran, "rows": perturbed, "findings": [finding_dict(d) for d in found + rows]}


def kernel_inputs(kernel, func, contract=None) -> tuple[list, dict]:
    """The inputs verify runs a kernel on: random, with index tables from the contract; and where each table's
    values came from (name -> phrase)."""
    args = random_inputs(kernel)
    if contract is None:
        return args, {}
    return args, contract.apply(kernel, args, dict(func.bindings))


def _verify_instance(func, glb: dict, ref, device: str, bench: bool, contract=None) -> dict:
    from ..runtime.bench import bench as bench_fn
    from ..runtime.bench import time_once
    from ..runtime.numerics import compare

    kernel = build_instance(func, glb, device)
    args, sources = kernel_inputs(kernel, func, contract)
    inplace = [] if kernel.out_idx else written_params(kernel.func)
    inputs = [a for k, a in enumerate(args) if k not in inplace]
    got = execute(kernel, args, inplace)
    scratch = [a.clone() if k in inplace else a for k, a in enumerate(args)]  # timing must not touch `args`
    _, ms = time_once(lambda: _sync(kernel(*scratch), device))
    rec = {"time_ms": ms}
    if sources:
        rec["inputs"] = sources
    if bench:
        rec["bench_ms"] = bench_fn(lambda: kernel(*scratch), warmup=5, rep=50, device=device, max_seconds=5.0)
    if ref is not None:
        expected = outputs(call_reference(ref, inputs, dict(func.bindings)))
        source = "the reference"
    elif device != "cpu":
        cpu_kernel = build_instance(func, glb, "cpu")
        expected = execute(cpu_kernel, [t.cpu() for t in args], inplace)
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


def select_kernels(kernels, name: str | None):
    if not name:
        return kernels
    return [k for k in kernels if name in (k.name, k.factory)]


def run(request: dict, emit) -> None:
    """Verify every selected instance of request["file"], calling emit(record) for each."""
    from ..check import check_source
    from ..codes import CODES
    from ..lowering import tolerating
    from ..source import read_python_source
    from .contract import InputContract
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
    chosen = select_kernels(result.kernels, request.get("kernel"))
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
            glb = load_module(path)
    except BaseException as exc:  # the user's module failed while loading: every instance fails with it
        if isinstance(exc, KeyboardInterrupt):
            raise
        for func in chosen:
            emit({**base, "kernel": func.name, "instance": func.instance, "passed": False,
                  "message": "running the file failed: " + _describe(exc, path)})
        return
    ref = glb.get(reference_name(text))
    ref = ref if callable(ref) else None
    contract = InputContract(glb, text)
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
                                           request.get("sanitize", False), contract,
                                           text if request.get("metamorphic") else None))
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
