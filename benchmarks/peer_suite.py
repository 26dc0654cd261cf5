"""The real TileLang's own test suite, run unchanged on tilelang_core: per-test outcomes, a table per folder, JSON.

Usage (the checkout is a tile-ai/tilelang `testing/python` folder kept outside this repository):
    python benchmarks/peer_suite.py /path/to/testing/python [--mode cpu|cuda|gpu] [--folders language,jit ...]
        [--only SUBSTR ...] [--counted-only] [-j 2] [--file-timeout 900] [--test-timeout 240] [--json out.json]

Each test file runs in its own pytest process with `peer_plugin` (alias + GPU shim; see its docstring for the
modes). A file killed for time has the test that was running marked `hang` and is started again without it.
Which tests count is decided by `peer_rules` (documented in docs/peer-suite.md); outcomes by `peer_outcomes`.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_outcomes  # noqa: E402
import peer_rules  # noqa: E402

MAX_RESTARTS = 4


def _suite_root(path: Path) -> Path:
    """The folder above `python/` (TileLang's `testing/`, whose conftest seeds and puts the repository on the path)."""
    return next((p for p in path.parents if (p / "conftest.py").exists() and p.name != "python"), path.parent)


def _run_pytest(path: Path, mode: str, test_timeout: float, file_timeout: float, deselect: list[str]) -> list[dict]:
    """One pytest process over `path`; the plugin's records (a killed process leaves what it wrote)."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as fh:
        out = Path(fh.name)
    env = dict(os.environ, PEER_MODE=mode, PEER_OUT=str(out), PEER_TEST_TIMEOUT=str(test_timeout),
               PYTHONPATH=os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", str(path), "-p", "peer_plugin", "-q", "-p", "no:cacheprovider",
           "-p", "no:xdist", "-p", "no:randomly", "-o", "addopts=", "--rootdir", str(_suite_root(path))]
    for nodeid in deselect:
        cmd += ["--deselect", nodeid]
    try:
        proc = subprocess.run(cmd, cwd=path.parent, env=env, capture_output=True, text=True, timeout=file_timeout)
        tail = (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        tail = "file timeout"
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    out.unlink(missing_ok=True)
    if not records and tail:
        records.append({"event": "collect-error", "tail": tail})
    return records


def run_file(path: Path, mode: str, test_timeout: float, file_timeout: float) -> dict:
    """All tests of one file: {nodeid: end record}, restarting past a test that hung the process."""
    results: dict[str, dict] = {}
    deselect: list[str] = []
    collect_error = None
    t0 = time.perf_counter()
    for _ in range(MAX_RESTARTS + 1):
        records = _run_pytest(path, mode, test_timeout, file_timeout, deselect)
        started = [r["nodeid"] for r in records if r["event"] == "start"]
        for r in records:
            if r["event"] == "end":
                prev = results.get(r["nodeid"])
                if prev is None or prev["outcome"] == "passed":  # keep the first failing phase
                    results[r["nodeid"]] = r
            elif r["event"] == "collect-error":
                collect_error = r["tail"]
        unfinished = [n for n in started if n not in results]
        if not unfinished:
            break
        hung = unfinished[-1]
        results[hung] = {"nodeid": hung, "outcome": "failed", "builds": [],
                         "exception": {"type": "PeerTestTimeout", "message": "process killed for time"}}
        deselect.append(hung)
    return {"file": str(path), "tests": results, "collect_error": collect_error,
            "seconds": round(time.perf_counter() - t0, 1)}


def build_counts(builds: list[dict]) -> dict:
    """CUDA mode, one test function: kernels compiled, failed (count and the first three), and rejected on the CPU too."""
    built = [b for b in builds if not b.get("cpu_rejected")]
    failed = [b for b in built if not b.get("ok")]
    return {"ok": len(built) - len(failed), "n_failed": len(failed), "failed": failed[:3],
            "cpu_rejected": len(builds) - len(built)}


def verdicts(root: Path, file_result: dict) -> list[dict]:
    """Per test function of the file: counted or the rule, and its verdict over its cases."""
    path = Path(file_result["file"])
    rules = peer_rules.classify_file(path)
    cases: dict[str, list[dict]] = collections.defaultdict(list)
    for nodeid, record in file_result["tests"].items():
        cases[peer_rules.function_of(nodeid)].append(record)
    rows = []
    for func, rule in rules.items():
        records = cases.get(func, [])
        outcomes = [peer_outcomes.classify_record(r) for r in records]
        verdict = peer_outcomes.worst(outcomes) if records else (
            peer_outcomes.classify_collect_error(file_result["collect_error"]) if file_result["collect_error"]
            else "skipped")
        if rule is None and verdict == "skipped":
            skips = {r.get("skip_reason", "") for r in records}
            rule = "skipped: " + ("; ".join(sorted(skips))[:160] or "not collected")
        first_bad = next((r for r, o in zip(records, outcomes) if o == verdict and o != "pass"), None)
        builds = [b for r in records for b in r.get("builds", [])]
        rows.append({"folder": path.relative_to(root).parts[0], "file": path.name, "function": func,
                     "counted": rule is None, "rule": rule, "verdict": verdict, "cases": len(records),
                     "case_outcomes": dict(collections.Counter(outcomes)),
                     "detail": (first_bad or {}).get("exception") or (
                         {"collect_error": file_result["collect_error"][-800:]} if file_result["collect_error"]
                         and not records else None),
                     "cuda_builds": build_counts(builds) if builds else None})
    return rows


def rescore(root: Path, rows: list[dict]) -> list[dict]:
    """An earlier run's rows with the counted/rule fields recomputed by the current rules."""
    rules: dict[tuple[str, str], dict] = {}
    for row in rows:
        key = (row["folder"], row["file"])
        if key not in rules:
            rules[key] = peer_rules.classify_file(root / row["folder"] / row["file"])
        rule = rules[key].get(row["function"])
        if rule is None and row["verdict"] == "skipped":
            rule = row["rule"] if (row["rule"] or "").startswith("skipped") else "skipped"
        row.update(counted=rule is None, rule=rule)
    return rows


def table(rows: list[dict]) -> str:
    """A markdown table per folder: counted functions by verdict, and the pass share."""
    cols = peer_outcomes.ORDER
    lines = ["| folder | counted | " + " | ".join(cols) + " | pass % | not counted |",
             "| --- | " + " | ".join("---" for _ in range(len(cols) + 3)) + " |"]
    folders = sorted({r["folder"] for r in rows})
    for folder in folders + ["all"]:
        sel = [r for r in rows if folder in ("all", r["folder"])]
        counted = [r for r in sel if r["counted"]]
        n = collections.Counter(r["verdict"] for r in counted)
        share = 100.0 * n["pass"] / len(counted) if counted else 0.0
        lines.append(f"| {folder} | {len(counted)} | " + " | ".join(str(n[c]) for c in cols)
                     + f" | {share:.1f} | {len(sel) - len(counted)} |")
    return "\n".join(lines)


def cuda_summary(rows: list[dict]) -> str:
    """CUDA mode: the kernels that passing tests built (not those the CPU backend rejects too, which the test
    expects to fail), and how many lowered and compiled for sm_90a."""
    per_file: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        if r["counted"] and r["verdict"] == "pass" and r["cuda_builds"]:
            per_file[r["file"]][0] += r["cuda_builds"]["ok"]
            per_file[r["file"]][1] += r["cuda_builds"].get("n_failed", len(r["cuda_builds"]["failed"]))
    lines = [f"{name}: {ok}/{ok + failed}" for name, (ok, failed) in sorted(per_file.items())]
    ok, failed = sum(v[0] for v in per_file.values()), sum(v[1] for v in per_file.values())
    total = ok + failed
    return "\n".join(lines + [f"sm_90a builds of passing tests' kernels: {ok}/{total} ({100.0 * ok / max(total, 1):.1f} %)"])


def excluded_markdown(root: Path, folders: list[str]) -> str:
    """Every test function the rules leave out, grouped by rule (the list docs/peer-suite.md points to)."""
    by_rule: dict[str, list[str]] = collections.defaultdict(list)
    for folder in folders:
        for path in sorted((root / folder).glob("test_*.py")):
            for func, rule in peer_rules.classify_file(path).items():
                if rule:
                    by_rule[rule].append(f"{folder}/{path.name}::{func}")
    lines = ["# Peer-suite tests not counted, by rule", "",
             f"Generated by `benchmarks/peer_suite.py --list-excluded` over {root.name}/ (rules: benchmarks/peer_rules.py).",
             ""]
    for rule in sorted(by_rule):
        lines += [f"## {rule} ({len(by_rule[rule])})", ""] + [f"- `{t}`" for t in by_rule[rule]] + [""]
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the selected folders' test files and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", help="a tile-ai/tilelang testing/python folder")
    ap.add_argument("--mode", choices=("cpu", "cuda", "gpu"), default="cpu")
    ap.add_argument("--folders", default=",".join(peer_rules.COUNTED_FOLDERS))
    ap.add_argument("--only", nargs="*", default=[], help="substrings of file paths to keep")
    ap.add_argument("--counted-only", action="store_true",
                    help="skip files in which the rules count no test (saves device time in gpu mode)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--file-timeout", type=float, default=900.0)
    ap.add_argument("--test-timeout", type=float, default=240.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--list-excluded", default=None, metavar="FILE",
                    help="write the tests the rules leave out (markdown, by rule) and stop")
    ap.add_argument("--rescore", default=None, metavar="JSON",
                    help="apply the current rules to an earlier run's JSON and print its tables (nothing runs)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    if args.rescore:
        print(table(rescore(root, json.loads(Path(args.rescore).read_text())["rows"])))
        return 0
    if args.list_excluded:
        Path(args.list_excluded).write_text(excluded_markdown(root, args.folders.split(",")))
        return 0
    files = sorted(p for folder in args.folders.split(",") for p in (root / folder).glob("test_*.py")
                   if not args.only or any(s in str(p) for s in args.only))
    if args.counted_only:
        files = [p for p in files if None in peer_rules.classify_file(p).values()]
    t0 = time.perf_counter()
    rows: list[dict] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_file, p, args.mode, args.test_timeout, args.file_timeout): p for p in files}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            result = fut.result()
            file_rows = verdicts(root, result)
            rows += file_rows
            n = collections.Counter(r["verdict"] for r in file_rows if r["counted"])
            print(f"[{i}/{len(files)}] {Path(result['file']).relative_to(root)} {result['seconds']} s "
                  + " ".join(f"{k}={v}" for k, v in sorted(n.items())), file=sys.stderr, flush=True)
            if args.json:  # after every file, so a run stopped from outside keeps what finished
                write_json(Path(args.json), args.mode, time.perf_counter() - t0, rows)
    print(table(rows))
    if args.mode == "cuda":
        print(cuda_summary(rows))
    return 0


def write_json(path: Path, mode: str, seconds: float, rows: list[dict]) -> None:
    """The run's rows as JSON (written whole each time: a reader never sees half a file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"mode": mode, "seconds": round(seconds, 1), "rows": rows}, indent=1, default=str))
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
