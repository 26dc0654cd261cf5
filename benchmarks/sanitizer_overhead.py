"""Sanitizer overhead: each kernel instance of examples/*.py (or the files given) run plain on the CPU backend
and in its instrumented mode (`tilelsp verify --sanitize`), on the same random inputs; prints a table of the
mean times, the ratio, the build times and the number of findings (every example should have 0).

    .venv/bin/python benchmarks/sanitizer_overhead.py [FILES...] [--rep N] [--json OUT]

Times are the fastest of --rep calls. The plain time is the built kernel's call on prepared arguments (its grid
runs in parallel); the sanitized time includes what a sanitized run adds on the host (the writer shadows and the report it allocates and reads).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best_ms(fn, rep: int) -> float:
    """The fastest of `rep` calls after one warm-up, in ms (the machine is shared: the minimum is the stable figure)."""
    fn()
    times = []
    for _ in range(rep):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def measure(path: Path, rep: int) -> list[dict]:
    """One row per kernel instance of `path`."""
    from tilelang_core.check import check_source
    from tilelang_core.codegen.cpu.sanitize import build_sanitized
    from tilelang_core.runtime.kernel import contiguous_args
    from tilelang_core.verify.child import build_instance, _load_module, random_inputs
    from tilelang_core.verify.sanitize import poison, sanitize_kernel

    result = check_source(path.read_text(), str(path))
    glb = _load_module(str(path))
    rows = []
    for func in result.kernels:
        kernel = build_instance(func, glb, "cpu")
        full = kernel._plan.prepare(tuple(random_inputs(kernel)), "cpu")
        for k in kernel.out_idx:
            poison(full[k])
        args, _ = contiguous_args(full)
        start = time.perf_counter()
        module = build_sanitized(kernel.func, kernel.out_idx)
        build_s = time.perf_counter() - start
        plain = best_ms(lambda: kernel._backend.module(*args), rep)
        sanitized = best_ms(lambda: module.run(args), rep)
        findings = sanitize_kernel(kernel, random_inputs(kernel))
        rows.append({"file": path.name, "instance": func.instance or func.name, "plain_ms": plain,
                     "sanitized_ms": sanitized, "ratio": sanitized / plain, "sanitized_build_s": build_s,
                     "findings": [f"{d.span.line}: [{d.code}] {d.message}" for d in findings]})
    return rows


def main(argv=None) -> int:
    """Measure every file and print the table."""
    from tilelang_core.alias import install_alias

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--rep", type=int, default=10)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    install_alias(force=True)
    files = args.files or sorted((ROOT / "examples").glob("*.py"))
    rows = []
    print(f"{'file':<24} {'instance':<44} {'plain ms':>10} {'sanitized ms':>13} {'ratio':>6} {'build s':>8} findings")
    for path in files:
        for r in measure(path, args.rep):
            rows.append(r)
            print(f"{r['file']:<24} {r['instance'][:44]:<44} {r['plain_ms']:>10.3f} {r['sanitized_ms']:>13.3f} "
                  f"{r['ratio']:>6.2f} {r['sanitized_build_s']:>8.2f} {len(r['findings'])}", flush=True)
            for f in r["findings"]:
                print("    " + f)
    if rows:
        worst = max(rows, key=lambda r: r["ratio"])
        flagged = sum(bool(r["findings"]) for r in rows)
        print(f"worst ratio {worst['ratio']:.2f} ({worst['file']}); findings on {flagged} of {len(rows)} instances")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
