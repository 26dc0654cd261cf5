"""Run-the-main corpus mode: every kernel file of a tile-ai/tilelang `examples/` checkout runs as `__main__`
on tilelang_core under the GPU shim (`corpus_child.py`), at most `-j` files at once, each with a timeout.

cuda: the first kernel each file builds is lowered for sm_90a and compiled with nvcc (the reference figure for
the real TileLang counts the same thing). cpu: kernels run on the CPU backend and the file's own checks run.
Outcomes are grouped by cause; files that need SM100, AMD or a missing optional package are reported apart, but
only after their error is classified: a Python traceback from tilelang_core is counted as one in any file.
"""
from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL_MARKERS = ("T.Kernel", "T.prim_func", "@tilelang.jit", "@jit", "tilelang.compile")
CHECK_MARKERS = ("assert_close", "assert_allclose", "allclose", "assert_similar", "assert ", "torch_assert_close")
SM100_MARKERS = re.compile(r"tcgen05|TCGEN5|sm_?100|SM100|sm_?120|SM120|shared\.tmem|alloc_tmem|blockscaled")
AMD_MARKERS = re.compile(r"target\s*=\s*['\"]hip|gfx9\d\d|k_pack|tilelang\.rocm|MatrixCore")


def kernel_files(folder: Path) -> list[Path]:
    """The example files with TileLang kernels (test_*, regression_* and conftest are drivers, not examples)."""
    out = []
    for p in sorted(folder.rglob("*.py")):
        if p.name.startswith(("test_", "regression_")) or p.name == "conftest.py":
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        if any(m in text for m in KERNEL_MARKERS):
            out.append(p)
    return out


def _cap_memory() -> None:
    """In a CPU-mode child: an address-space cap (TILELSP_CORPUS_MEM_GB, default 10), so a file whose default shapes
    need tens of GB fails with MemoryError instead of waking the OOM killer on whatever else the machine runs (cuda
    mode builds its first kernel after the file's own set-up, which for some files allocates more: uncapped)."""
    import resource

    cap = int(float(os.environ.get("TILELSP_CORPUS_MEM_GB", "10")) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def run_one(path: Path, mode: str, timeout: float, cuda_dir: Path | None) -> dict:
    """Run one file in a fresh child process; the child's JSON, or a timeout/crash record."""
    with tempfile.TemporaryDirectory(prefix="tilelsp-corpus-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(HERE / "corpus_child.py"), "--mode", mode, "--out", str(out), str(path)]
        if cuda_dir is not None:
            cuda_dir.mkdir(parents=True, exist_ok=True)
            cmd[-1:-1] = ["--cuda-out", str(cuda_dir / (path.stem + ".cu"))]
        env = dict(os.environ, PYTHONUNBUFFERED="1", TILELANG_CORE_ALIAS="force")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                                  stdin=subprocess.DEVNULL, start_new_session=True,
                                  preexec_fn=_cap_memory if mode == "cpu" else None)
        except subprocess.TimeoutExpired:
            return {"file": str(path), "status": "timeout", "kernels": [], "error": None,
                    "seconds": round(time.perf_counter() - t0, 1)}
        if out.exists():
            row = json.loads(out.read_text())
        else:
            row = {"file": str(path), "status": "crash", "kernels": [], "error": {
                "type": f"exit {proc.returncode}", "message": proc.stderr[-600:], "frames": []}}
        row["wall"] = round(time.perf_counter() - t0, 1)
        return row


def _innermost_ours(frames: list[dict]) -> bool:
    for f in reversed(frames):
        if "/site-packages/" in f["file"] or f["file"].startswith("<"):
            continue
        return "/tilelang_core/" in f["file"]
    return False


def classify(row: dict, text: str, mode: str) -> tuple[str, str]:
    """(outcome, cause) for one file's row."""
    kernels, err, status = row.get("kernels", []), row.get("error"), row["status"]
    if mode == "cuda" and any(k.get("ok") for k in kernels):
        return "lowered", "ok"
    if mode == "cuda" and kernels:
        return "failed", "nvcc: " + _first_error_line(kernels[0].get("error", ""))
    if mode == "cpu" and status == "finished" and kernels:
        return ("matched", "ok") if any(m in text for m in CHECK_MARKERS) else ("ran", "no result checks")
    if status in ("timeout", "crash"):
        return status, status
    if status in ("finished", "exit") and not kernels:
        return "failed", "no kernel built (" + status + ")"
    cause = _cause(err, kernels, mode)
    if cause.startswith("internal"):  # a traceback from our code counts whatever the file needs: classified first
        return "failed", cause
    excluded = _excluded(err, text, row["file"])
    if excluded:
        return "excluded", excluded
    return "failed", cause


def _first_error_line(text: str) -> str:
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:160]
    return text.strip()[:160]


def _excluded(err: dict | None, text: str, path: str) -> str | None:
    msg = (err or {}).get("message", "")
    if err and err["type"] == "ModuleNotFoundError" and "tilelang" not in msg:
        return "needs a missing optional package: " + msg
    if err and err["type"] == "NameError" and re.search(r"^\s*(from|import) fla\b", text, re.MULTILINE):
        return "needs a missing optional package: fla (its import is guarded; the name it defines is missing)"
    if "cpp_extension" in text and ("CUDA_HOME" in msg or "Error building extension" in msg):
        return "needs a real GPU: it builds and runs its own CUDA torch extension before the TileLang kernel"
    if "libcuda.so cannot found" in msg:
        return "needs a real GPU: a Triton kernel (its reference or benchmark) runs (TRITON_INTERPRET=1 may run it)"
    if SM100_MARKERS.search(text):
        return "needs SM100/SM120 (Blackwell)"
    if AMD_MARKERS.search(text):
        return "AMD/HIP only"
    return None


def _cause(err: dict | None, kernels: list, mode: str) -> str:
    if err is None:
        return "unknown"
    if "diagnostics" in err:
        first = err["diagnostics"][0] if err["diagnostics"] else {"code": "?", "message": err["message"]}
        return f"diagnostic: {first['code']}: {first['message'][:110]}"
    kind = "internal" if _innermost_ours(err["frames"]) else "user code"
    if err["type"] in ("ImportError", "ModuleNotFoundError", "AttributeError") and "tilelang" in err["message"]:
        kind = "alias"
    if err["type"] == "UnsupportedFeatureError":  # a real-TileLang API tilelang_core declines, at the user's call
        kind = "unsupported"
    if mode == "cpu" and kernels and err["type"] == "AssertionError":
        kind = "result mismatch"
    if err["type"] == "MemoryError" or "out of memory" in (err["message"] or "").lower():
        kind = "memory (the default shapes need more than TILELSP_CORPUS_MEM_GB)"
    return f"{kind}: {err['type']}: {err['message'].splitlines()[0][:140] if err['message'] else ''}"


def reference_lowered(md_path: Path) -> set[str]:
    """Files the real TileLang lowered in mode C, from the research table (`corpus_real_tilelang.md`)."""
    got = set()
    for line in md_path.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[1].startswith("`") and cells[4] == "`ok`":
            got.add(cells[1].strip("`"))
    return got


def run_corpus(folder: Path, mode: str, jobs: int, timeout: float, only: list[str], cuda_dir: Path | None) -> list:
    """Run every kernel file (or those whose path contains one of `only`), printing a line per file."""
    files = [p for p in kernel_files(folder) if not only or any(o in str(p) for o in only)]
    rows, done = [], 0

    def task(p: Path):
        return p, run_one(p, mode, timeout, cuda_dir)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, row in pool.map(task, files):
            done += 1
            rel = str(path.relative_to(folder))
            row["rel"] = rel
            row["outcome"], row["cause"] = classify(row, path.read_text(errors="replace"), mode)
            rows.append(row)
            print(f"[{done:3}/{len(files)}] {row['outcome']:8} {row.get('wall', row.get('seconds', 0)):6.1f}s "
                  f"{rel}  {'' if row['cause'] == 'ok' else row['cause'][:110]}", flush=True)
    return rows


def summarize(rows: list, mode: str, reference: set[str] | None) -> dict:
    """Counts per outcome, files per cause, and the comparison with the reference set."""
    outcomes = collections.Counter(r["outcome"] for r in rows)
    causes = collections.defaultdict(list)
    for r in rows:
        if r["outcome"] not in ("lowered", "matched", "ran"):
            causes[r["cause"]].append(r["rel"])
    summary = {"mode": mode, "files": len(rows), "outcomes": dict(outcomes),
               "causes": {c: sorted(fs) for c, fs in sorted(causes.items(), key=lambda kv: -len(kv[1]))},
               "python_tracebacks_in_core": sum(r["cause"].startswith("internal") for r in rows)}
    if reference is not None and mode == "cuda":
        ours = {r["rel"] for r in rows if r["outcome"] == "lowered"}
        summary["reference_lowered"] = len(reference)
        summary["reference_not_ours"] = sorted(reference - ours)
        summary["ours_not_reference"] = sorted(ours - reference)
    return summary


def print_table(summary: dict) -> None:
    """The per-cause table."""
    print(f"\n{summary['mode']}: {summary['files']} files; " +
          ", ".join(f"{k} {v}" for k, v in sorted(summary["outcomes"].items())))
    for cause, files in summary["causes"].items():
        print(f"  {len(files):3}  {cause[:150]}")
        for f in files[:6]:
            print(f"         {f}")
        if len(files) > 6:
            print(f"         … {len(files) - 6} more")
    if "reference_lowered" in summary:
        print(f"reference lowered {summary['reference_lowered']}; lowered by the reference but not by us: "
              f"{len(summary['reference_not_ours'])}; by us only: {len(summary['ours_not_reference'])}")
