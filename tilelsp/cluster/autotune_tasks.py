"""The work a Ray cluster does for `tilelsp autotune --ray`: plain functions the driver wraps as Ray tasks.

`compile_config` runs on a CPU worker: it executes the file (its text travels) under the alias, builds one config's
kernel and returns it packed as plain data (the CPU backend's shared library, checked against the file's reference,
or a CUDA artifact's cubin and launch metadata). `measure_packed` runs on a device worker and needs only torch, the
ctypes loader or cuda-bindings and `runtime.launch`: no tvm and no source; it times the kernel on random inputs.
When the CPU is the device, `measure_on_cpu` times every kernel one after another in one task, then the finalists
again, as a local search does. Each task returns a time stamp record (`stamp`). None imports ray, so a worker
needs nothing of the driver but these modules.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path

_TUNINGS: dict = {}  # per worker process: the loaded file's Tuning, by (text digest, kernel, device, overrides)


def _tuning(name: str, text: str, kernel, device: str, count: int, overrides: dict):
    from tilelang_core.runtime.autotune_file import load_tuning
    from tilelang_core.runtime.autotune_search import warm_tvm

    key = (hashlib.sha256(text.encode()).hexdigest(), kernel, device, count, repr(sorted(overrides.items())))
    if key not in _TUNINGS:
        folder = Path(tempfile.mkdtemp(prefix="tilelsp-ray-"))
        path = folder / name  # the file's own name: kernel names and spans come out as on the driver
        path.write_text(text)
        _TUNINGS[key] = load_tuning(str(path), text, kernel, device, count, overrides)
        warm_tvm()  # the first build's import, counted in the task's `loaded` stamp rather than in its build
    return _TUNINGS[key]


def stamp(task: str, start: float, loaded: float | None = None) -> dict:
    """When a task ran and in which worker process: start, `loaded` (its imports and the file done) and end."""
    return {"task": task, "pid": os.getpid(), "start": start, "loaded": loaded or start, "end": time.time()}


def compile_config(name: str, text: str, kernel, device: str, count: int, overrides: dict, config: dict,
                   threads: int | None = None) -> tuple[dict, dict]:
    """Build one config of the file's factory: the kernel packed for `measure_packed`, and the task's stamp. A
    CPU kernel is also checked against the file's reference here (with `threads` kernel threads), as a local
    search checks every config before timing it."""
    start = time.time()
    if device == "cpu":
        use_cpu_threads(threads)
    tuning = _tuning(name, text, kernel, device, count, overrides)
    loaded = time.time()
    jit_kernel = tuning.build(config)
    if device == "cpu":
        tuning.check(jit_kernel)
    return pack(jit_kernel), stamp("compile", start, loaded)


def pack(jit_kernel) -> dict:
    """A built JITKernel as plain data: its parameters and its library (CPU) or artifact (CUDA)."""
    params = [(p.name, p.dtype, list(p.shape), p.is_output, p.is_scalar) for p in jit_kernel.params]
    if jit_kernel.target == "cpu":
        from tilelang_core.runtime.cpu_artifact import cpu_cache, cpu_key

        cpu = jit_kernel._backend.module
        if cpu.library is None:
            raise RuntimeError("the CPU kernel could not be exported as a shared library (is a C compiler "
                               "installed on the worker?)")
        so = Path(cpu.library.path).read_bytes() if os.path.exists(cpu.library.path) else \
            cpu_cache().binary_path(cpu_key(jit_kernel.func)).read_bytes()
        return {"kind": "cpu", "symbol": jit_kernel.func.name, "library": so, "params": params}
    art = jit_kernel._backend.artifact
    return {"kind": "cuda", "meta": art.meta(), "source": art.source, "cubin": art.cubin, "params": params}


def _inputs(params, device: str):
    import torch

    from tilelang_core.runtime.profiler import supply_tensor

    gen = torch.Generator().manual_seed(0)
    args = []
    for name, dtype, shape, is_output, is_scalar in params:
        if is_scalar:
            raise ValueError(f"parameter '{name}' is a scalar: a remote timing needs tensor parameters only")
        if any(not isinstance(d, int) for d in shape):
            raise ValueError(f"parameter '{name}' has a symbolic shape {shape}: tune a concrete instance")
        if is_output:
            args.append(torch.zeros(shape, dtype=getattr(torch, dtype), device=device))
        else:
            args.append(supply_tensor("Auto", shape, dtype, device, gen))
    return args


def runner(packed: dict):
    """A callable running the packed kernel on a full argument list, and the device it runs on."""
    if packed["kind"] == "cpu":
        from tilelang_core.runtime.cpu_library import CpuLibrary

        folder = Path(tempfile.mkdtemp(prefix="tilelsp-ray-lib-"))
        path = folder / f"{packed['symbol']}.so"
        path.write_bytes(packed["library"])
        return CpuLibrary(path, packed["symbol"]), "cpu"
    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    meta = {k: v for k, v in packed["meta"].items() if k in Artifact.__dataclass_fields__}
    art = Artifact(source=packed["source"], cubin=packed["cubin"], **meta)
    return (lambda *args: launch(art, args)), "cuda"


def _measure(packed: dict):
    """`measure(warmup, rep)` -> ms of a packed kernel on random inputs, budgets in ms (as a local search times it:
    the mean on a GPU, the fastest call on the CPU), and the device it runs on."""
    from tilelang_core.runtime.autotune_search import sample_ms
    from tilelang_core.runtime.timing import do_bench

    run, device = runner(packed)
    args = _inputs(packed["params"], device)
    if device == "cpu":
        return (lambda warmup, rep: sample_ms(lambda: run(*args), warmup, rep)), device
    return (lambda warmup, rep: do_bench(lambda: run(*args), warmup=warmup, rep=rep)), device


def measure_packed(packed: dict, warmup: int, rep: int) -> tuple[float, str]:
    """Milliseconds per run of a packed kernel on random inputs, and the device label it was timed on."""
    from tilelang_core.runtime.autotune_search import device_label

    measure, device = _measure(packed)
    return measure(warmup, rep), device_label(device)


def final_round(warmup: int, rep: int, *packed: dict) -> list:
    """The finalists' timings of `autotune_search.final_round`, on one worker (a fair final comparison)."""
    from tilelang_core.runtime.autotune_search import final_round as rounds

    return rounds([_measure(p)[0] for p in packed], warmup, rep)


def use_cpu_threads(threads: int | None) -> None:
    """Run CPU kernels in this worker with the driver's thread count (`threads`), else one per CPU of this
    worker, as `tilelsp autotune` runs them locally. Ray sets OMP_NUM_THREADS to a task's CPUs, which TVM's
    thread pool would follow: a kernel timed with 1 thread here and 2 in a local search ranks differently.
    Effective before this process imports tvm or runs a CPU kernel (TVM sizes its pool once)."""
    from tilelang_core.runtime.autotune_search import all_cpus

    os.environ["TVM_NUM_THREADS"] = str(threads or all_cpus())


def measure_on_cpu(warmup: int, rep: int, threads: int | None, *packed: dict) -> dict:
    """The CPU as the one device: every kernel timed one after another (no compile runs beside them) and again in
    reverse order (`autotune_search.pass_back`), then the fastest few again (`autotune_search.final_round`).
    {"timings": ms per kernel, "finalists": their indices, "final": their final-round timings, "device": label,
    "stamp": ...}."""
    from tilelang_core.runtime.autotune_search import device_label, fastest, pass_back
    from tilelang_core.runtime.autotune_search import final_round as rounds

    start = time.time()
    use_cpu_threads(threads)
    measures = [_measure(p)[0] for p in packed]
    loaded = time.time()
    timings = pass_back(measures, [measure(warmup, rep) for measure in measures], warmup, rep)
    finalists = fastest([(None, ms) for ms in timings])
    final = rounds([measures[k] for k in finalists], warmup, rep)
    return {"timings": timings, "finalists": finalists, "final": final, "device": device_label("cpu"),
            "stamp": stamp("time", start, loaded)}
