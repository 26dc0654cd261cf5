"""`do_bench` takes TileLang's arguments with TileLang's meaning: `warmup` and `rep` are milliseconds, bounded."""
import io
import time

import pytest

from tilelang_core.runtime import timing
from tilelang_core.runtime.profiler import do_bench


def _sleeper(ms: float, calls: list):
    def fn():
        calls.append(1)
        time.sleep(ms / 1e3)
    return fn


def test_budgets_are_milliseconds_not_calls():
    calls: list = []
    # a 20 ms call with warmup=500 ms: about 25 warm-up calls would be TileLang's count; 500 calls would be ours before
    ms = do_bench(_sleeper(20, calls), warmup=100, rep=100)
    assert 19 <= ms < 200
    assert 4 <= len(calls) <= 20  # ~5 warm-up + ~5 timed (+ the estimate), never hundreds


def test_a_slow_call_costs_a_few_calls_and_says_so():
    calls: list = []
    err = io.StringIO()
    old = timing.PROGRESS_AFTER_S
    timing.PROGRESS_AFTER_S = 0.1
    try:
        timing.do_bench(_sleeper(150, calls), warmup=500, rep=100, progress=err)
    finally:
        timing.PROGRESS_AFTER_S = old
    assert len(calls) <= 5  # the first call and the warm-up it counts toward, then one timed call
    assert "do_bench: timing" in err.getvalue() and "ms a call" in err.getvalue()


def test_explicit_counts_win_and_are_capped():
    assert timing.plan_calls(1.0, 25, 100, n_warmup=3, n_repeat=7) == (3, 7)
    assert timing.plan_calls(1.0, 25, 100) == (25, 100)
    assert timing.plan_calls(5000.0, 500, 100) == (1, 1)
    assert timing.plan_calls(1e-9, 25, 100) == (timing.MAX_CALLS, timing.MAX_CALLS)
    calls: list = []
    do_bench(lambda: calls.append(1), _n_warmup=2, _n_repeat=3)
    assert len(calls) == timing.ESTIMATE_CALLS + 3  # the estimate's calls count as the 2 warm-ups; 3 timed


def test_return_modes_and_quantiles():
    times = [1.0, 2.0, 3.0, 10.0]
    assert timing.summarize(times) == 4.0
    assert timing.summarize(times, "median") == 2.5 and timing.summarize(times, "min") == 1.0
    assert timing.summarize(times, quantiles=[0.0, 1.0]) == [1.0, 10.0]
    with pytest.raises(ValueError, match="return_mode"):
        timing.summarize(times, "fastest")
