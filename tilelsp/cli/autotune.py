"""`tilelsp autotune FILE`: search a kernel factory's configs on this machine's device (or a Ray cluster) and
print every config's time and the winner.

Exit status: 0 a winner was found, 1 every config failed (or the file has check errors), 2 usage (nothing to
tune, bad arguments). The best config is remembered on disk (`--no-cache` searches again).
"""
from __future__ import annotations

import json
import os
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def parse_overrides(items) -> dict:
    """`M=8192,N=8192` (repeatable) as {"M": 8192, "N": 8192}; values are Python literals or plain strings."""
    import ast

    out = {}
    for item in items or []:
        for part in filter(None, (p.strip() for p in item.split(","))):
            name, sep, value = part.partition("=")
            if not sep or not name.isidentifier():
                raise ValueError(f"expected NAME=VALUE, got {part!r}")
            try:
                out[name] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                out[name] = value
    return out


def _device(name: str) -> str:
    if name != "auto":
        return name
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def run_autotune(args) -> int:
    """Entry point used by `tilelsp autotune` (args: file, kernel, device, configs, jobs, warmup, rep, args,
    json, no_cache, ray, task_timeout)."""
    from .loading import load_checked

    loaded = load_checked(args.file, "autotune")
    if isinstance(loaded, int):
        return loaded
    try:
        overrides = parse_overrides(args.args)
    except ValueError as exc:
        print(f"tilelsp autotune: --args: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.no_cache:
        os.environ["TILELSP_AUTOTUNE_CACHE"] = "0"
    address = args.ray or os.environ.get("TILELSP_RAY_ADDRESS")
    device = _device(args.device)
    if device == "cpu":  # CPU kernels time with a set thread count, here and on Ray workers alike
        from tilelang_core.runtime.autotune_search import all_cpus, cpu_thread_setting

        os.environ["TVM_NUM_THREADS"] = str(cpu_thread_setting() or all_cpus())
    from tilelang_core.runtime.autotune_file import TuningError, load_tuning

    from tilelsp.cluster.connection import RayUnavailable

    try:
        tuning = load_tuning(args.file, loaded.text, args.kernel, device, args.configs, overrides)
    except TuningError as exc:
        print(f"tilelsp autotune: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"tilelsp autotune: {tuning.name}({', '.join(f'{k}={v!r}' for k, v in tuning.call.items())}) over "
          f"{len(tuning.configs)} configs from {tuning.config_source}" + (f" on the Ray cluster {address}"
                                                                         if address else ""), file=sys.stderr)
    cluster_s = None
    try:
        if address:  # the cluster starts (or is joined) before the search's clock starts
            from tilelsp.cluster.connection import connect

            start = time.perf_counter()
            connect(address)
            cluster_s = time.perf_counter() - start
        start = time.perf_counter()
        if address:
            from tilelsp.cluster.autotune import autotune_on_ray

            result = autotune_on_ray(address, args.file, loaded.text, args.kernel, device, args.configs, overrides,
                                     warmup=args.warmup, rep=args.rep, task_timeout=args.task_timeout,
                                     configs=tuning.configs)
        else:
            result = tuning.tuner().run(warmup=args.warmup, rep=args.rep, jobs=args.jobs or os.cpu_count() or 1)
    except RayUnavailable as exc:
        print(f"tilelsp autotune: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 -- every config failed: the first error, with the others noted
        notes = "\n".join(getattr(exc, "__notes__", []))
        print(f"tilelsp autotune: {type(exc).__name__}: {exc}\n{notes}".rstrip(), file=sys.stderr)
        return EXIT_FAIL
    _print(result, tuning, args.json, time.perf_counter() - start, cluster_s)
    return EXIT_OK


def _print(result, tuning, as_json: bool, seconds: float, cluster_s: float | None) -> None:
    if as_json:  # trace: a Ray search's tasks (wall-clock stamps); search_started: when the search's clock started
        print(json.dumps({"kernel": tuning.name, "call": tuning.call, "device": result.device, "cached": result.cached,
                          "search_s": seconds, "cluster_s": cluster_s, "search_started": time.time() - seconds,
                          "trace": result.trace,
                          "best": {"config": result.config, "latency_ms": result.latency},
                          "tied": result.tied,
                          "timings": [{"config": c, "latency_ms": t} for c, t in result.timings],
                          "final": [{"config": c, "latency_ms": t, "rounds": n} for c, t, n in result.final],
                          "failures": [{"config": c, "error": f"{type(e).__name__}: {e}"}
                                       for c, e in result.failures]}, default=str))
        return
    print(f"device: {result.device}" + ("  (remembered result; --no-cache searches again)" if result.cached else ""))
    tied = result.tied
    final = {repr(c): (ms, n) for c, ms, n in result.final}
    rounds = max((n for _, n in final.values()), default=0)
    print(f"  {'first pass':>13s}  {f'final: median of {rounds} rounds' if final else ''}")
    # the finalists first, in the order of their final figure (the winner on top), then the others by first pass
    for config, ms in sorted(result.timings, key=lambda t: (t[0] != result.config, repr(t[0]) not in final,
                                                         final.get(repr(t[0]), (t[1],))[0])):
        mark = "*" if config == result.config else "=" if config in tied else " "
        decided = f"{final[repr(config)][0]:10.4f} ms" if repr(config) in final else " " * 13
        print(f"{mark} {ms:10.4f} ms  {decided}  {config}")
    for config, exc in result.failures:
        first = (str(exc).strip().splitlines() or [""])[0]
        print(f"  {'failed':>13s}  {config}: {type(exc).__name__}: {first[:200]}")
    print(f"best: {result.config}  {result.latency:.4f} ms  (search {seconds:.1f} s)")
    if tied:
        print(f"tie: {len(tied)} other config(s) (=) within the timing noise of the best; of those, the first in the "
              "config list is named")
