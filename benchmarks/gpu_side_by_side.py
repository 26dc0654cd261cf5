"""Same file, same GPU (issue 24): real TileLang example files built by tilelang_core and by the real TileLang.

Here (tvm, nvcc, no GPU): `python benchmarks/gpu_side_by_side.py prepare EXAMPLES [--dir .sbs/ours]` builds our sm_90a
artifacts for every file in SPECS at the file's own configuration (gpu_corpus.prepare, build-only).
There (H200: torch, triton, nvcc): `python3 benchmarks/gpu_side_by_side.py run --site SITE [--examples EXAMPLES]` with
the real TileLang 0.1.15 and its dependencies unpacked in SITE (`TILELANG_DEFAULT_TARGET` names sm_90a). Our core
runs from DIR/pkg with DIR/cache when `prepare` made them, else from this checkout with --tvm-site naming a folder
that holds apache-tvm there (step 1 lowers in child processes; the timing process never imports apache-tvm, so the
real TileLang's own tvm is the only one it loads); `--warm-only` stops after step 1:
  1. each file runs under the real TileLang in its own process, a few at a time, so that its kernels are compiled
     in parallel into TileLang's disk cache; with --tvm-site, likewise under our core (lowering there, into
     DIR/cache), instead of `prepare`;
  2. in one process each file runs under our core (artifacts from DIR/cache, our tvm-free launcher), then under the
     real TileLang (cache hits); a file's own result checks pass when its run raises nothing. The first call of
     every kernel, direct or through its profiler, records a copy of its arguments;
  3. the kernels are paired in call order; on copies of the same recorded arguments (the file's own fresh random
     inputs) each runs once and the outputs are compared with each other and, where the file's `ref_program`
     takes those arguments, with torch; then ours, theirs and `ref_program` are timed alternately (triton's
     do_bench medians, ROUNDS rounds) and the medians of the rounds reported.
Prints a table last and writes side_by_side.json into --out (default $OUT or .). Carrying both compilers to a
lent machine (64 MiB a call): the real TileLang's site trimmed of C++ sources, z3's binaries and cutlass' tools packs
to 36 MB with xz; apache-tvm's libtvm_compiler.so packs to 62 MB, so it travels in two calls split at a byte
offset and is joined there while the machine is still warm. A file that imports tvm itself cannot run in the timing
process (it holds the real TileLang's tvm only) and has no pair.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import runpy
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = '{"kind": "cuda", "arch": "sm_90a"}'
# (file under examples/, a call to make in it instead of running it as __main__)
SPECS = [
    ("gemm/example_gemm.py", None),
    ("gemm_splitk/example_tilelang_gemm_splitk.py", None),
    ("gemm_fp8/example_tilelang_gemm_fp8.py", None),
    ("dequantize_gemm/example_dequant_gemm_fp4_hopper.py", None),
    ("flash_attention/example_mha_fwd_bshd.py", None),
    ("flash_attention/example_mha_bwd_bshd.py", None),
    ("deepseek_mla/example_mla_decode.py", None),
    ("flash_decoding/example_gqa_decode.py", None),
    ("blocksparse_attention/example_tilelang_sparse_gqa_decode_paged.py", None),
    ("fusedmoe/example_fusedmoe_tilelang.py", None),
    ("gemv/example_gemv.py", "main(do_bench=False)"),
    ("norm/rms_norm.py", None),
    ("norm/layernorm.py", None),
    ("elementwise/example_elementwise_add.py", None),
    ("convolution/example_convolution.py", None),
]
ROUNDS = 5
FILE_SECONDS = 150
# relative error ‖ours − theirs‖ / ‖theirs‖ allowed per output dtype (the operands' precision sets it)
TOLERANCE = {"float64": 1e-6, "float32": 2e-3, "float16": 2e-2, "bfloat16": 3e-2}


def prepare(examples: Path, out: Path) -> int:
    """Build our artifacts for every spec into out/cache (and a snapshot of the core into out/pkg)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_corpus

    return gpu_corpus.prepare(examples, [f for f, _ in SPECS], out, timeout=600, build_only=True,
                              entries={f: e for f, e in SPECS if e})


# ---------------------------------------------------------------------------------------------- on the GPU machine

def warm(label: str, examples: Path, specs: list, env: dict, prelude: str, jobs: int) -> dict:
    """Run every file in its own process, `jobs` at a time, so its kernels land in the compiler's disk cache."""
    code = (prelude + "import runpy, sys; f, entry = sys.argv[1], sys.argv[2]; sys.path.insert(0, '.'); sys.argv = [f]\n"
            "if entry: eval(entry, runpy.run_path(f, run_name='__sbs__'))\n"
            "else: runpy.run_path(f, run_name='__main__')\n")

    def one(spec):
        rel, entry = spec
        path = examples / rel
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, "-c", code, path.name, entry or ""], cwd=path.parent, env=env,
                               capture_output=True, text=True, timeout=FILE_SECONDS * 2)
            status, tail = ("ok" if p.returncode == 0 else f"rc {p.returncode}"), (p.stdout + p.stderr)[-600:]
        except subprocess.TimeoutExpired:
            status, tail = "timeout", ""
        print(f"warm {label:6} {status:8} {time.perf_counter() - t0:6.1f}s {rel}", flush=True)
        if status != "ok":
            print("   " + tail[-300:].replace("\n", "\n   "), flush=True)
        return rel, {"status": status, "seconds": round(time.perf_counter() - t0, 1), "tail": tail}

    with ThreadPoolExecutor(jobs) as pool:
        return dict(pool.map(one, specs))


def warm_both(out: Path, examples: Path, site: Path, tvm_site: Path | None, specs: list, jobs: int) -> dict:
    """Step 1 for both compilers: ours lowers on this machine when `tvm_site` holds apache-tvm (no prepare)."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]  # einops and the like
    result = {"theirs": warm("theirs", examples, specs, dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(site)] + inherited), TILELANG_DEFAULT_TARGET=TARGET,
        TILELANG_PRINT_ON_COMPILATION="0"), "", jobs)}
    if tvm_site is not None:
        os.environ["TILELSP_CACHE_DIR"] = str((out / "cache").resolve())
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tvm_site)] + inherited),
                   TILELANG_CORE_ALIAS="force")
        result["ours"] = warm("ours", examples, specs, env,
                              "import tilelang_core; tilelang_core.install_alias(force=True)\n", jobs)
    return result


def _copy(value):
    """A deep copy of a kernel's arguments: tensors cloned, lists and tuples copied, the rest as is."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value


class Recorder:
    """The first call of every kernel during one file's run, with a copy of its arguments."""

    def __init__(self):
        self.calls: list[tuple] = []  # (callable, args copy, name)
        self._seen: dict[int, object] = {}

    def note(self, key_obj, fn, args, name: str) -> None:
        """Record `fn(*args)` unless the kernel `key_obj` stands for was recorded already."""
        if id(key_obj) in self._seen:
            return
        self._seen[id(key_obj)] = key_obj  # keeps the id from being reused
        self.calls.append((fn, _copy(list(args)), name))


class _FileTimeout(Exception):
    """A file's run went past FILE_SECONDS."""


def _on_alarm(signum, frame):
    raise _FileTimeout(f"ran past {FILE_SECONDS} s")


def run_file(examples: Path, rel: str, entry: str | None, log) -> tuple[str, dict]:
    """Run one example file in this process; (status, its globals)."""
    path = (examples / rel).resolve()
    cwd = os.getcwd()
    os.chdir(path.parent)
    sys.path.insert(0, str(path.parent))
    sys.argv = [str(path)]
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(FILE_SECONDS)
    namespace: dict = {}
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            if entry:
                namespace = runpy.run_path(str(path), run_name="__sbs__")
                eval(entry, namespace)  # noqa: S307 -- the harness's own call
            else:
                namespace = runpy.run_path(str(path), run_name="__main__")
        status = "pass"
    except SystemExit as exc:
        status = "pass" if exc.code in (None, 0) else f"exit {exc.code}"
    except BaseException as exc:  # noqa: BLE001 -- the file's failure is the result
        status = f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.alarm(0)
        os.chdir(cwd)
        sys.path.remove(str(path.parent))
    return status, namespace


def _forget_example_modules(examples: Path) -> None:
    """Drop modules imported from the examples (helpers like torch_refs) so the next compiler imports them anew."""
    root = str(examples.resolve())
    for key, mod in list(sys.modules.items()):
        if (getattr(mod, "__file__", None) or "").startswith(root):
            del sys.modules[key]


def ours_phase(out: Path, examples: Path, specs: list, log) -> dict:
    """Every file under our core, recording its kernels' first calls; file -> {status, calls, ns}."""
    os.environ["TILELSP_CACHE_DIR"] = str((out / "cache").resolve())
    # artifacts built by `prepare` (with its snapshot of the core) or by step 1; tvm is not importable here, so a
    # kernel missing from the cache fails loudly and the real TileLang's own tvm is the only one this process loads
    sys.path.insert(0, str((out / "pkg").resolve()) if (out / "pkg").is_dir() else str(ROOT))
    import tilelang_core
    from tilelang_core.runtime.jit import JITKernel

    tilelang_core.install_alias(force=True)
    results = {}
    original = JITKernel.__call__
    for rel, entry in specs:
        rec = Recorder()

        def call(kernel, *args, _rec=rec):
            _rec.note(kernel, kernel, args, kernel.name)
            return original(kernel, *args)

        JITKernel.__call__ = call
        t0 = time.perf_counter()
        status, ns = run_file(examples, rel, entry, log)
        print(f"ours   {time.perf_counter() - t0:6.1f}s {len(rec.calls)} kernel(s) {status[:90]:20} {rel}",
              flush=True)
        results[rel] = {"status": status, "calls": rec.calls, "ns": ns}
        _forget_example_modules(examples)
    JITKernel.__call__ = original
    from tilelang_core.alias import uninstall_alias

    uninstall_alias()
    return results


def theirs_phase(examples: Path, site: Path, specs: list, log) -> dict:
    """Every file under the real TileLang, recording its kernels' first calls; file -> {status, calls}."""
    for key in [k for k in sys.modules if k.split(".")[0] in ("tilelang", "tvm", "tvm_ffi")]:
        del sys.modules[key]
    os.environ.update(TILELANG_DEFAULT_TARGET=TARGET, TILELANG_PRINT_ON_COMPILATION="0")
    sys.path.insert(0, str(site))
    import tilelang
    from tilelang.jit.kernel import JITKernel
    from tilelang.profiler import Profiler

    results = {}
    call0, inputs0 = JITKernel.__call__, Profiler._get_inputs
    for rel, entry in specs:
        rec = Recorder()

        def call(kernel, *args, _rec=rec, **kwargs):
            _rec.note(kernel.adapter, kernel, args, "kernel")
            return call0(kernel, *args, **kwargs)

        def get_inputs(profiler, *args, _rec=rec, **kwargs):
            ins = inputs0(profiler, *args, **kwargs)
            if profiler.adapter is not None:
                _rec.note(profiler.adapter, profiler.adapter, ins, "profiler")
            return ins

        JITKernel.__call__, Profiler._get_inputs = call, get_inputs
        t0 = time.perf_counter()
        status, _ = run_file(examples, rel, entry, log)
        print(f"theirs {time.perf_counter() - t0:6.1f}s {len(rec.calls)} kernel(s) {status[:90]:20} {rel}",
              flush=True)
        results[rel] = {"status": status, "calls": rec.calls}
        _forget_example_modules(examples)
    JITKernel.__call__, Profiler._get_inputs = call0, inputs0
    print(f"real TileLang {tilelang.__version__}", flush=True)
    return results


def _tensors(value) -> list:
    """The tensors in a kernel's return value or arguments, in order."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def rel_error(a, b) -> float:
    """‖a − b‖ / ‖b‖ in float64 (inf when a has a NaN that b has not, or the shapes differ)."""
    import torch

    if a.shape != b.shape:
        return math.inf
    a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
    if bool(torch.isnan(a64).any()) and not bool(torch.isnan(b64).any()):
        return math.inf
    a64, b64 = torch.nan_to_num(a64), torch.nan_to_num(b64)
    den = float(torch.linalg.vector_norm(b64))
    num = float(torch.linalg.vector_norm(a64 - b64))
    return num / den if den else (0.0 if num == 0 else math.inf)


def _tolerance(t) -> float:
    name = str(t.dtype).replace("torch.", "")
    return TOLERANCE.get(name, 0.1 if "float8" in name else 0.0)


def compare(ours_fn, theirs_fn, args, ref) -> dict:
    """Run both on copies of `args`; worst relative error between their outputs and against `ref` (or None)."""
    import torch

    a_args, b_args = _copy(args), _copy(args)
    a_out, b_out = ours_fn(*a_args), theirs_fn(*b_args)
    torch.cuda.synchronize()
    a_all, b_all = _tensors(a_out) + _tensors(a_args), _tensors(b_out) + _tensors(b_args)
    worst, ok = 0.0, len(a_all) == len(b_all)
    for x, y in zip(a_all, b_all):
        err = rel_error(x, y)
        worst = max(worst, err)
        ok = ok and err <= _tolerance(y)
    vs_ref = None
    if ref is not None:
        try:
            r = _tensors(ref(*_copy(args)))
            got = _tensors(a_out)
            if r and len(r) == len(got):
                vs_ref = max(rel_error(g, x) for g, x in zip(got, r))
        except Exception:  # noqa: BLE001 -- a ref_program that takes other arguments has no column
            vs_ref = None
    return {"match": ok, "ours_vs_theirs": worst, "ours_vs_torch": vs_ref}


def time_pair(ours_fn, theirs_fn, args, ref) -> dict:
    """Median ms of ours, theirs and ref (None when it does not run), timed alternately over ROUNDS rounds."""
    import statistics

    from triton.testing import do_bench

    a_args, b_args, r_args = _copy(args), _copy(args), _copy(args)
    ref_ok = ref is not None
    if ref_ok:
        try:
            ref(*r_args)
        except Exception:  # noqa: BLE001
            ref_ok = False
    t = {"ours": [], "theirs": [], "torch": []}
    for _ in range(ROUNDS):
        t["ours"].append(do_bench(lambda: ours_fn(*a_args), warmup=25, rep=100, return_mode="median"))
        t["theirs"].append(do_bench(lambda: theirs_fn(*b_args), warmup=25, rep=100, return_mode="median"))
        if ref_ok:
            t["torch"].append(do_bench(lambda: ref(*r_args), warmup=25, rep=100, return_mode="median"))
    med = {k: (statistics.median(v) if v else None) for k, v in t.items()}
    med["spread"] = (max(t["ours"]) - min(t["ours"])) / med["ours"] if med["ours"] else None
    return med


def run(out: Path, examples: Path, site: Path, tvm_site: Path | None, report_dir: Path, jobs: int,
        only: list[str], warm_only: bool = False) -> int:
    """Steps 1-3 of the module docstring; prints the table last."""
    specs = [s for s in SPECS if not only or any(o in s[0] for o in only)]
    report_dir.mkdir(parents=True, exist_ok=True)
    warm = warm_both(out, examples, site, tvm_site, specs, jobs)
    if warm_only:
        return 0
    with open(report_dir / "side_by_side_files.log", "w") as log:
        ours = ours_phase(out, examples, specs, log)
        theirs = theirs_phase(examples, site, specs, log)
    rows = []
    for rel, _ in specs:
        a, b = ours[rel], theirs[rel]
        ref = a["ns"].get("ref_program")
        if len(a["calls"]) != len(b["calls"]):
            print(f"note: {rel}: ours called {len(a['calls'])} kernel(s), theirs {len(b['calls'])}", flush=True)
        for i, ((fa, args, name), (fb, _, _)) in enumerate(zip(a["calls"], b["calls"])):
            row = {"file": rel, "kernel": f"{i}:{name}", "ours_checks": a["status"], "theirs_checks": b["status"]}
            try:
                row.update(compare(fa, fb, args, ref))
                row.update(time_pair(fa, fb, args, ref))
            except Exception as exc:  # noqa: BLE001 -- one kernel's failure is a row, not the end
                row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            rows.append(row)
            print(f"pair {rel} {row['kernel']}: {row.get('ours')} vs {row.get('theirs')} "
                  f"match={row.get('match')} {row.get('error', '')}", flush=True)
    (report_dir / "side_by_side.json").write_text(json.dumps(
        {"warm": warm, "rows": rows, "rounds": ROUNDS}, indent=1, default=str))
    print_table(rows)
    return 0


def print_table(rows: list[dict]) -> None:
    """The per-kernel table, then the geometric mean of theirs/ours (above 1: ours faster)."""
    print("\n| file | kernel | ours ms | TileLang ms | torch ms | TileLang/ours | ours/torch err | same as TileLang |")
    print("|---|---|---|---|---|---|---|---|")
    speedups = []
    for r in rows:
        if "error" in r:
            print(f"| {r['file']} | {r['kernel']} | error: {r['error'][:80]} | | | | | |")
            continue
        sp = r["theirs"] / r["ours"] if r.get("ours") else None
        if sp:
            speedups.append(sp)
        tor = f"{r['torch']:.4f}" if r.get("torch") else "-"
        ref = f"{r['ours_vs_torch']:.1e}" if r.get("ours_vs_torch") is not None else "-"
        print(f"| {r['file']} | {r['kernel']} | {r['ours']:.4f} | {r['theirs']:.4f} | {tor} | {sp:.3f} | {ref} | "
              f"{'yes' if r['match'] else 'NO'} ({r['ours_vs_theirs']:.1e}) |")
    if speedups:
        geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        print(f"\n{len(speedups)} kernels: geometric mean TileLang/ours {geo:.3f} (above 1: ours faster), "
              f"lowest {min(speedups):.3f}, highest {max(speedups):.3f}; "
              f"{sum(r.get('match', False) for r in rows)}/{len(rows)} outputs agree")


def main() -> int:
    """Parse the subcommand."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("examples")
    pr = sub.add_parser("run")
    pr.add_argument("--site", required=True, help="folder holding the real tilelang and its dependencies")
    pr.add_argument("--out", default=os.environ.get("OUT", "."))
    pr.add_argument("--jobs", type=int, default=6)
    pr.add_argument("--only", nargs="*", default=[])
    pr.add_argument("--examples", default=None, help="the example files (default: DIR/examples)")
    pr.add_argument("--tvm-site", default=None, help="a folder holding apache-tvm: our kernels lower on this machine")
    pr.add_argument("--warm-only", action="store_true", help="stop after step 1")
    for p in (pp, pr):
        p.add_argument("--dir", default=str(ROOT / ".sbs" / "ours"))
    args = ap.parse_args()
    out = Path(args.dir).resolve()
    if args.cmd == "prepare":
        return prepare(Path(args.examples), out)
    examples = Path(args.examples).resolve() if args.examples else out / "examples"
    tvm_site = Path(args.tvm_site).resolve() if args.tvm_site else None
    return run(out, examples, Path(args.site).resolve(), tvm_site, Path(args.out), args.jobs, args.only,
               args.warm_only)


if __name__ == "__main__":
    sys.exit(main())
