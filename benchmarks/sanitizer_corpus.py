"""The sanitizer on a TileLang examples corpus: each file runs as __main__ under the alias and the GPU shim
(corpus_child.py's cpu mode), except that each kernel's first launch runs in the CPU backend's instrumented mode;
prints each file's kernels, launches and sanitizer findings (every finding needs a judgement: the example's bug,
or ours), and how many instances ran sampled (their `sanitize-sampled` notes are not findings).

    .venv/bin/python benchmarks/sanitizer_corpus.py /work/corpus/examples --only gemm/ elementwise [--timeout 300]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _sanitize_first_runs() -> None:
    """On top of corpus_child's cpu mode: each kernel's first run is sanitized (findings go into its entry)."""
    from tilelang_core.runtime import jit_kernel
    from tilelang_core.verify.sanitize import finding_dict, sanitize_run

    counting = jit_kernel._CpuBackend

    class SanitizingCpuBackend(counting):
        def run(self, args):
            if "sanitizer" in self.entry:
                return super().run(args)
            func = self.module.func
            try:
                found = sanitize_run(func, tuple(func.out_idx or ()), list(args))
                self.entry["sanitizer"] = [finding_dict(d) for d in found]
            except Exception as exc:  # noqa: BLE001 -- a sanitizer failure is data; the plain run goes on
                self.entry["sanitizer"] = []
                self.entry["sanitizer_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                return super().run(args)
            self.entry["runs"] += 1

    jit_kernel._CpuBackend = SanitizingCpuBackend


def child(path: Path, out: Path) -> int:
    """Run one file (in this process) and write its result as JSON."""
    sys.path.insert(0, str(HERE))
    import corpus_child

    from tilelang_core.lowering import tolerating
    from tilelang_core.verify.sanitize import RUNTIME_CHECKED

    plain = corpus_child._patch_cpu

    def patch(result: dict) -> None:
        plain(result)
        _sanitize_first_runs()

    corpus_child._patch_cpu = patch
    with tolerating(RUNTIME_CHECKED):
        result = corpus_child.run(path, "cpu", None)
    out.write_text(json.dumps(result, default=str))
    return 0


def main(argv=None) -> int:
    """Run the matching files one by one and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, nargs="?")
    ap.add_argument("--only", nargs="*", default=[], help="substrings of the relative paths to run")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(*args.child)
    files = [p for p in sorted(args.folder.rglob("*.py")) if not p.name.startswith(("test_", "regression_"))
             and p.name != "conftest.py"
             and (not args.only or any(s in str(p.relative_to(args.folder)) for s in args.only))]
    rows = []
    for path in files:
        rel = str(path.relative_to(args.folder))
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            try:
                subprocess.run([sys.executable, __file__, "--child", str(path), str(out)], timeout=args.timeout,
                               capture_output=True)
                res = json.loads(out.read_text()) if out.exists() else {"status": "crashed", "kernels": []}
            except subprocess.TimeoutExpired:
                res = {"status": "timeout", "kernels": []}
        kernels = res.get("kernels") or []
        every = [f for k in kernels for f in k.get("sanitizer") or ()]
        found = [f for f in every if f["severity"] != "info"]
        sampled = sum(f["code"] == "sanitize-sampled" for f in every)  # instances too large: corner blocks only
        errors = [k["sanitizer_error"] for k in kernels if k.get("sanitizer_error")]
        sanitized = sum("sanitizer" in k and not k.get("sanitizer_error") for k in kernels)
        rows.append({"file": rel, "status": res.get("status"), "kernels": len(kernels), "sanitized": sanitized,
                     "sampled": sampled, "findings": found, "sanitizer_errors": errors})
        print(f"{rel:<70} {res.get('status'):<12} kernels {len(kernels):>2} sanitized {sanitized:>2} "
              f"(sampled {sampled}) findings {len(found)}", flush=True)
        for f in found:
            print(f"    {f['line']}: [{f['code']}] {f['message'][:200]}")
        for e in errors:
            print(f"    sanitizer error: {e[:200]}")
    print(f"{sum(r['sanitized'] for r in rows)} kernel instances sanitized in {len(rows)} files; "
          f"{sum(len(r['findings']) for r in rows)} findings in {sum(bool(r['findings']) for r in rows)} files")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
