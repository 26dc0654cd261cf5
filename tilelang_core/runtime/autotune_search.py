"""What an autotune search needs besides timing: configs compiled in parallel (`build_all`, which par_compile uses
too), a progress bar, the device it timed on, and the best config remembered on disk.

Parallel compilation forks worker processes (Linux) that build each config's kernel into the artifact cache; the
search then loads every kernel from the cache (no tvm in the searching process for the CPU backend) and times
them one after another, so timings never compete with each other. A config whose build fails in a worker is
skipped with its message. The best config is stored under <cache>/autotune/<key>.json, the key naming the
kernel (its factory's source), the call's arguments (shapes, dtypes), the configs, the target and the device.
"""
from __future__ import annotations

import inspect
import io
import json
import math
import os
import platform
import statistics
import sys
import time

from .cache import atomic_write, cache_dir, sha256


class Progress:
    """A one-line progress bar on stderr (a line per step when stderr is not a terminal)."""

    def __init__(self, total: int, label: str, stream=None, enabled: bool = True):
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()

    def step(self, note: str = "") -> None:
        """One more item finished."""
        self.done += 1
        if not self.enabled:
            return
        width = 24
        fill = int(width * self.done / self.total)
        text = (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} "
                f"{time.perf_counter() - self.start:.1f}s {note}")
        self.stream.write(("\r" + text[:110].ljust(110)) if self.tty else text + "\n")
        if self.tty and self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def default_jobs() -> int:
    """Worker processes for parallel compilation: TILELSP_AUTOTUNE_JOBS, else 1 (compile in this process)."""
    try:
        return max(1, int(os.environ.get("TILELSP_AUTOTUNE_JOBS", "1")))
    except ValueError:
        return 1


_FORKED_BUILD = None  # the build function the forked workers inherit (set only while a pool runs)


def _build_forked(item):
    index, config = item
    try:
        _FORKED_BUILD(config)
        return index, None
    except Exception as exc:  # noqa: BLE001 -- reported as the config's failure
        return index, f"{type(exc).__name__}: {exc}"


def precompile(build, configs: list[dict], jobs: int, progress: Progress | None = None) -> dict[int, str]:
    """Build every config in `jobs` forked workers (their kernels land in the artifact cache); returns the
    failed configs' index -> error message. Does nothing (returns {}) with one job or where fork is unavailable."""
    global _FORKED_BUILD
    if jobs <= 1 or len(configs) <= 1 or not sys.platform.startswith("linux"):
        return {}
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    failures: dict[int, str] = {}
    _FORKED_BUILD = build
    warm_tvm()  # imported once here, every forked worker starts with it (seconds each otherwise)
    try:
        with ProcessPoolExecutor(min(jobs, len(configs)), mp_context=multiprocessing.get_context("fork")) as pool:
            for index, error in pool.map(_build_forked, list(enumerate(configs))):
                if error is not None:
                    failures[index] = error
                if progress is not None:
                    progress.step(f"compiled {configs[index]}" if error is None else "failed")
    except (BrokenProcessPool, OSError):  # a worker died: the search builds what is missing itself
        return failures
    finally:
        _FORKED_BUILD = None
    return failures


def build_all(build, items: list, num_workers=None, ignore_error: bool = False) -> list:
    """`build(item)` for each item, in order; forked workers (`num_workers`, else TILELSP_AUTOTUNE_JOBS) fill the
    artifact cache first. With `ignore_error` an item that fails gives None instead of raising."""
    precompile(build, items, num_workers or default_jobs())
    kernels = []
    for item in items:
        try:
            kernels.append(build(item))
        except Exception:
            if not ignore_error:
                raise
            kernels.append(None)
    return kernels


def warm_tvm() -> None:
    """Import tvm now (when installed), before the first build needs it."""
    from ..codegen import tvm_loader

    if tvm_loader.available():
        tvm_loader.load()


FINALISTS = 4  # the fastest configs of the first pass, timed again before the winner is named ...
FINALIST_BAND = 1.10  # ... and any other within 10 % of the fastest (one noisy first-pass call can reorder those)
MAX_FINALISTS = 8
FINAL_ROUNDS = 5  # rounds every finalist is timed at least
MAX_FINAL_ROUNDS = 15  # more rounds, while some rival is neither separated from the leader nor level with it
TIE = 0.01  # a rival whose median per-round ratio to the leader is within 1 % of 1 is level with it (a tie)
MAX_NOISE = 0.05  # ... or within the rounds' own spread of that ratio, up to 5 %: noise never hides a wider gap
SIGNIFICANCE = 0.05  # a rival is separated when it was slower in so many rounds that chance explains it at most 5 %


def fastest(timings: list, count: int = FINALISTS, band: float = FINALIST_BAND, most: int = MAX_FINALISTS) -> list[int]:
    """Indices of a first pass's finalists among its (config, ms) entries, fastest first: the `count` fastest, and
    any other within `band` times the fastest figure, up to `most` in all."""
    order = sorted(range(len(timings)), key=lambda k: timings[k][1])
    near = [k for k in order if timings[k][1] <= timings[order[0]][1] * band] if order else []
    return order[:max(count, min(len(near), most))]


def pass_back(measures: list, figures: list[float], warmup: float, rep: float) -> list[float]:
    """The first pass's `figures` after each config is timed once more in reverse order (`measure(warmup, rep)`),
    each the lower of its two: load that starts or stops during a pass slows the configs at one end of it, and
    the other pass times those configs at the other end."""
    again = {k: measures[k](warmup, rep) for k in reversed(range(len(measures)))}
    return [min(ms, again[k]) for k, ms in enumerate(figures)]


def final_round(measures: list, warmup: float, rep: float, rounds: int = FINAL_ROUNDS,
                max_rounds: int = MAX_FINAL_ROUNDS) -> list[list[float]]:
    """Each finalist's timings (`measure(warmup, rep)` -> ms), the finalists interleaved round by round: a burst of
    other work on the machine slows one round, and each round compares the finalists with each other (`verdicts`).
    After `rounds` rounds it goes on (up to `max_rounds`) while some rival is still open: neither separated from
    the leader nor level with it."""
    samples: list[list[float]] = [[] for _ in measures]
    for done in range(1, max_rounds + 1):
        for k, measure in enumerate(measures):
            samples[k].append(measure(warmup, rep))
        if done >= rounds and "open" not in verdicts(samples).values():
            break
    return samples


def leader(samples: list[list[float]]) -> int:
    """The finalist with the lowest median over the rounds (one disturbed round does not move a median)."""
    medians = [statistics.median(s) for s in samples]
    return medians.index(min(medians))


def slower_rounds_needed(rounds: int) -> int:
    """The fewest of `rounds` rounds a rival must be slower than the leader in for the sign test to say it is
    slower (a one-sided binomial tail of at most SIGNIFICANCE); rounds + 1 when no count is enough."""
    for need in range(rounds + 1):
        tail = sum(math.comb(rounds, k) for k in range(need, rounds + 1)) / 2 ** rounds
        if tail <= SIGNIFICANCE:
            return need
    return rounds + 1


def verdicts(samples: list[list[float]]) -> dict[int, str]:
    """Each rival's standing against the leader, from the rounds paired (the same round's timings compared):
    "separated" when it was slower in enough rounds (`slower_rounds_needed`) and its median ratio to the leader is
    above 1 + TIE; "level" when that median ratio is within the noise of 1 (`level_band`: the two are a tie however
    many rounds follow); "open" otherwise."""
    lead = leader(samples)
    out = {}
    for k, runs in enumerate(samples):
        if k == lead:
            continue
        ratios = [mine / theirs for mine, theirs in zip(runs, samples[lead])]
        ratio = statistics.median(ratios)
        slower = sum(r > 1 for r in ratios)
        if ratio > 1 + TIE and slower >= slower_rounds_needed(len(ratios)):
            out[k] = "separated"
        elif abs(ratio - 1) <= level_band(ratios):
            out[k] = "level"
        else:
            out[k] = "open"
    return out


def level_band(ratios: list[float]) -> float:
    """How far from 1 a rival's median ratio to the leader may be for the two to be level: the ratios' spread over
    the rounds (their median absolute deviation), at least TIE and at most MAX_NOISE."""
    middle = statistics.median(ratios)
    spread = statistics.median(abs(r - middle) for r in ratios)
    return max(TIE, min(MAX_NOISE, spread))


def winner(samples: list[list[float]], order: list[int]) -> tuple[int, list[int]]:
    """(the winning finalist's position, the positions tied with it). The leader and every rival it has not
    separated from (`verdicts`: level, or still open when the rounds ran out) are a tie, won by the first in the
    config list (`order`: each finalist's index there), so two searches whose noise swaps near-equal configs name
    the same winner."""
    tied = [leader(samples), *(k for k, v in verdicts(samples).items() if v != "separated")]
    won = min(tied, key=order.__getitem__)
    return won, sorted(k for k in tied if k != won)


def sample_ms(fn, warmup: float, rep: float) -> float:
    """The CPU backend's figure for a kernel: its fastest call after `warmup` ms of warm-up, over `rep` ms of timed
    calls (TileLang's budgets in milliseconds, at least one call each: `timing.do_bench`). On a shared machine a
    mean moves with the load (2x between runs minutes apart); the least disturbed call does not."""
    from .timing import do_bench

    return do_bench(fn, warmup=warmup, rep=rep, return_mode="min", progress=io.StringIO())


def all_cpus() -> int:
    """The CPUs this process may run on: the CPU backend's kernel threads when autotuning, unless set."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cpu_thread_setting() -> int | None:
    """The CPU backend's kernel threads this process was told to use (TVM_NUM_THREADS, else OMP_NUM_THREADS,
    which TVM's thread pool reads), or None (then `all_cpus`); a remote timing uses the same count."""
    for name in ("TVM_NUM_THREADS", "OMP_NUM_THREADS"):
        try:
            value = int(os.environ.get(name, ""))
        except ValueError:
            continue
        if value > 0:
            return value
    return None


def device_label(target: str) -> str:
    """What the timings ran on: the CUDA device's name, or the CPU (the CPU backend's timings, labelled so)."""
    if target == "cuda":
        import torch

        return f"cuda:{torch.cuda.get_device_name()}"
    return f"cpu:{cpu_name()} (CPU backend timing)"


def cpu_name() -> str:
    """This machine's CPU model."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def kernel_identity(factory) -> str | None:
    """A stable name for a kernel factory (module, qualified name, source text), or None when it has none."""
    fn = getattr(factory, "factory", None) or factory
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    if getattr(fn, "__name__", "") == "<lambda>" or getattr(fn, "__closure__", None):
        return None  # captured values are not in the source: two closures of one text are different kernels
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}\n{source}"


def best_key(identity: str, call: str, search_args: str, target: str, device: str) -> str:
    """The key of a remembered search result: the kernel, the call, what the search was given (configs, compile
    and profile arguments, as text), the target and the device."""
    from .artifact import compiler_version

    return sha256("tilelsp-autotune", 2, identity, call, search_args, target, device, compiler_version())


def _best_path(key: str):
    return cache_dir() / "autotune" / f"{key}.json"


def load_best(key: str) -> dict | None:
    """The remembered {config, latency, device, timings} for `key`, or None."""
    if os.environ.get("TILELSP_AUTOTUNE_CACHE", "1") == "0":
        return None
    try:
        data = json.loads(_best_path(key).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("config"), dict) else None


def save_best(key: str, record: dict) -> None:
    """Remember a search result (best effort: an unwritable cache only loses the memory)."""
    try:
        atomic_write(_best_path(key), json.dumps(record, indent=1, default=str).encode())
    except OSError:
        pass
