"""The work a Ray cluster does for `tilelsp verify --ray` / `tilelsp bench --ray`: plain functions the driver
wraps as tasks (neither imports ray).

`prepare_instance` runs on a CPU worker: it executes the file (its text travels), builds one kernel instance for
the device, makes the inputs exactly as a local verify does (the same seed, on the CPU; index tables from the
file's input contract, verify/contract.py) and computes the expected outputs (the file's reference, or the CPU
backend for a GPU run). `run_instance` runs on a device worker
with only torch, the loaders and `runtime.launch`: it runs the packed kernel, compares and times it.
"""
from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path

_MODULES: dict = {}  # per worker process: (text digest, name) -> (path, check result, module globals, contract)


def _loaded(name: str, text: str):
    from tilelang_core.check import check_source
    from tilelang_core.runtime.user_file import load_module
    from tilelang_core.verify.contract import InputContract

    key = (hashlib.sha256(text.encode()).hexdigest(), name)
    if key not in _MODULES:
        path = Path(tempfile.mkdtemp(prefix="tilelsp-ray-")) / name
        path.write_text(text)
        glb = load_module(str(path))
        _MODULES[key] = (str(path), check_source(text, str(path)), glb, InputContract(glb, text))
    return _MODULES[key]


def prepare_instance(name: str, text: str, kernel, index: int, device: str) -> dict:
    """Build the index-th selected instance of the file for `device`, with its inputs and expected outputs."""
    from tilelang_core.runtime.user_file import reference_name
    from tilelang_core.verify.child import (build_instance, call_reference, execute, kernel_inputs, outputs,
                                            select_kernels, written_params)

    from .autotune_tasks import pack

    path, result, glb, contract = _loaded(name, text)
    func = select_kernels(result.kernels, kernel)[index]
    built = build_instance(func, glb, device)
    cpu = built if device == "cpu" else build_instance(func, glb, "cpu")
    args, sources = kernel_inputs(cpu, func, contract)  # the same seed, order and index tables as a local verify
    inplace = [] if built.out_idx else written_params(built.func)
    ref = glb.get(reference_name(text))
    inputs = [a for k, a in enumerate(args) if k not in inplace]
    if callable(ref):
        expected, source = outputs(call_reference(ref, inputs, dict(func.bindings))), "the reference"
    elif device != "cpu":
        expected, source = execute(cpu, [a.clone() for a in args], inplace), "the CPU backend"
    else:
        expected, source = None, None
    outs = list(built.out_idx) or inplace
    return {"kernel": func.name, "instance": func.instance, "packed": pack(built), "args": args,
            "inplace": inplace, "out_idx": list(built.out_idx), "names": [built.params[k].name for k in outs],
            "expected": expected, "source": source, "inputs": sources}


def run_instance(prepared: dict, device: str, bench: bool) -> dict:
    """Run a prepared instance on this worker's device, compare with the expected outputs and time it."""
    import torch

    from tilelang_core.runtime.bench import bench as bench_fn
    from tilelang_core.runtime.kernel import new_output
    from tilelang_core.runtime.numerics import compare

    from .autotune_tasks import runner

    run, _ = runner(prepared["packed"])
    args = [a.to(device) for a in prepared["args"]]
    params = prepared["packed"]["params"]
    full = [new_output(params[k][2], getattr(torch, params[k][1]), device) if k in prepared["out_idx"] else a
            for k, a in enumerate(_with_outputs(args, prepared["out_idx"]))]
    run_args = [a.clone() if k in prepared["inplace"] else a for k, a in enumerate(full)]
    start = time.perf_counter()
    run(*run_args)
    if device == "cuda":
        torch.cuda.synchronize()
    rec = {"kernel": prepared["kernel"], "instance": prepared["instance"], "device": device,
           "time_ms": (time.perf_counter() - start) * 1e3}
    if prepared.get("inputs"):
        rec["inputs"] = prepared["inputs"]
    if bench:
        scratch = [a.clone() if k in prepared["inplace"] else a for k, a in enumerate(full)]
        rec["bench_ms"] = bench_fn(lambda: run(*scratch), warmup=5, rep=50, device=device, max_seconds=5.0)
    got = [run_args[k] for k in (prepared["out_idx"] or prepared["inplace"])]
    if prepared["expected"] is None:
        rec.update(passed=True, max_abs_err=0.0, max_rel_err=0.0,
                   message="no reference function found (define ref_program or add `# tilelsp: reference=NAME`); "
                           "the kernel ran without errors but nothing was compared")
        return rec
    results = [compare(a, e.to(device=a.device, dtype=a.dtype), name=f"output '{n}'", scale_atol=True)
               for a, e, n in zip(got, prepared["expected"], prepared["names"])]
    rec.update(passed=len(got) == len(prepared["expected"]) and all(r.passed for r in results),
               max_abs_err=max((r.max_abs_err for r in results), default=None),
               max_rel_err=max((r.max_rel_err for r in results), default=None),
               message="; ".join(r.message for r in results if r.message) or f"matches {prepared['source']}")
    return rec


def _with_outputs(inputs: list, out_idx: list) -> list:
    """The full argument list: the inputs in order, a placeholder at every output position."""
    it = iter(inputs)
    total = len(inputs) + len(out_idx)
    return [None if k in out_idx else next(it) for k in range(total)]
