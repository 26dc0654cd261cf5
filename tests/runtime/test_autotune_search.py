"""The autotune search's parts: GEMM configs from the carver hints, configs compiled in forked workers (a broken one
skipped with its error), the device label, the best config remembered on disk, and `tilelsp autotune FILE`."""
from __future__ import annotations

import json
import os
import textwrap

import pytest

KERNEL = textwrap.dedent('''
    import tilelang
    import tilelang.language as T


    @tilelang.jit(out_idx=[-1])
    def scale(M, N, block_M=16, threads=32):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
                tile = T.alloc_fragment((block_M, N), "float32")
                T.copy(A[bx * block_M, 0], tile)
                for i, j in T.Parallel(block_M, N):
                    tile[i, j] = tile[i, j] * 3.0
                T.copy(tile, B[bx * block_M, 0])
        return main


    def ref_program(A):
        return A * 3

    # tilelsp: scale(M=64, N=8)
''')

# the last one is invalid: its build fails with the check's diagnostic
CONFIGS = [{"block_M": 16, "threads": 32}, {"block_M": 32, "threads": 32}, {"block_M": 16, "threads": 0}]
TUNED = KERNEL.replace("@tilelang.jit(out_idx=[-1])", f"@tilelang.autotune(configs={CONFIGS!r})\n@tilelang.jit(out_idx=[-1])")


def test_gemm_configs_come_from_the_hints_and_fit_the_factory():
    from tilelang_core.runtime.autotune_configs import fit_configs, gemm_configs, is_gemm_like

    configs = gemm_configs(8192, 8192, 8192, topk=16)
    assert len(configs) == 16 and len({tuple(c.items()) for c in configs}) == 16
    assert len({(c["block_M"], c["block_N"], c["block_K"]) for c in configs}) >= 8  # tile shapes first, then depths

    def matmul(M, N, K, block_M=128, block_N=128, block_K=32, num_stages=3):
        return None

    assert is_gemm_like(matmul) and not is_gemm_like(lambda M, block=1: None)
    fitted = fit_configs(matmul, configs)
    assert all("threads" not in c for c in fitted) and len(fitted) <= 16


def test_progress_prints_a_line_per_step_off_a_terminal(capsys):
    from tilelang_core.runtime.autotune_search import Progress

    bar = Progress(2, "compiling")
    bar.step("a"), bar.step("b")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "2/2" in lines[1] and "#" * 24 in lines[1]


def test_the_final_round_interleaves_the_finalists_until_the_leader_separates():
    from tilelang_core.runtime.autotune_search import fastest, final_round

    calls = []
    figures = {"a": [4.0] * 15, "b": [2.0] * 15}

    def measure(name):
        def run(warmup, rep):
            calls.append(name)
            return figures[name][sum(c == name for c in calls) - 1]
        return run

    assert final_round([measure("a"), measure("b")], 1, 1, rounds=5) == [[4.0] * 5, [2.0] * 5]
    assert calls == ["a", "b"] * 5  # slower in 5 of 5 rounds (p = 1/32): separated, no more rounds
    assert fastest([({"x": 1}, 3.0), ({"x": 2}, 1.0), ({"x": 3}, 2.0), ({"x": 4}, 9.0)], count=3) == [1, 2, 0]
    # beyond the fastest four, every config within 10 % of the fastest is a finalist too (at most eight)
    near = [({"x": k}, 1.0 + k / 100) for k in range(12)]
    assert fastest(near) == list(range(8)) and fastest(near[:6] + [({"x": 9}, 2.0)] * 3) == [0, 1, 2, 3, 4, 5]


def test_a_second_pass_in_reverse_order_keeps_each_configs_lower_figure():
    from tilelang_core.runtime.autotune_search import fastest, pass_back

    calls = []
    # a burst of load at the end of the first pass timed the last configs (the fastest, 1.0 when quiet) 10x slow;
    # the reverse pass, after it, gets their quiet figures; a burst now slows the first ones, which keep theirs
    again = {0: 40.0, 1: 30.0, 2: 1.0, 3: 1.1}

    def measure(k):
        def run(warmup, rep):
            calls.append(k)
            return again[k]
        return run

    first = [4.0, 3.0, 10.0, 11.0]
    figures = pass_back([measure(k) for k in range(4)], first, 1, 1)
    assert calls == [3, 2, 1, 0] and figures == [4.0, 3.0, 1.0, 1.1]
    assert fastest([(k, ms) for k, ms in enumerate(figures)], count=2) == [2, 3]


def test_the_sign_test_needs_more_slower_rounds_the_more_rounds_there_are():
    from tilelang_core.runtime.autotune_search import slower_rounds_needed

    assert [slower_rounds_needed(n) for n in (3, 5, 8, 11, 15)] == [4, 5, 7, 9, 12]


def test_a_cpu_kernels_figure_is_its_least_disturbed_call():
    import itertools
    import time

    from tilelang_core.runtime.autotune_search import sample_ms

    calls = itertools.count()
    # every third call is undisturbed (1 ms), the others wait 20 ms; budgets in ms: several calls are timed
    ms = sample_ms(lambda: time.sleep(0.001 if next(calls) % 3 == 2 else 0.02), warmup=0, rep=150)
    assert 0.9 <= ms < 10.0


def test_load_on_the_machine_during_the_final_round_does_not_make_a_tie():
    from tilelang_core.runtime.autotune_search import winner

    # config 1 is twice as fast as config 0; from round 2 on another process slows both 2.5x. Each one's best
    # (1.0) and the leader's median (2.5) overlap, but every round still has config 0 twice as slow
    samples = [[2.0, 5.0, 5.0, 5.0, 5.0], [1.0, 2.5, 2.5, 2.5, 2.5]]
    assert winner(samples, [0, 1]) == (1, [])
    # a burst that slows the leader alone in two rounds: not separated after 5 rounds (3 of 5), after 11 it is
    from tilelang_core.runtime.autotune_search import verdicts

    burst = [[2.0] * 11, [1.0, 3.0, 1.0, 3.0] + [1.0] * 7]
    assert verdicts([s[:5] for s in burst]) == {0: "open"}
    assert verdicts(burst) == {0: "separated"} and winner(burst, [0, 1]) == (1, [])


def test_finalists_level_within_the_noise_are_a_tie_won_by_the_first_config():
    from tilelang_core.runtime.autotune_search import final_round, verdicts, winner

    # finalists are configs 7, 2 and 5 with steady timings; 2 is 0.5 % slower than 7 (level), 5 is 10 % slower
    assert winner([[4.00] * 5, [4.02] * 5, [4.40] * 5], [7, 2, 5]) == (1, [0])
    assert winner([[4.00] * 5, [4.20] * 5, [4.40] * 5], [7, 2, 5]) == (0, [])
    # the same kernel twice on a noisy machine: 3 % apart in median, within the rounds' spread -> level at round 5
    a = iter([1.00, 1.06, 0.98, 1.01, 1.08] * 3)
    b = iter([1.03, 1.00, 1.04, 1.05, 0.99] * 3)
    samples = final_round([lambda w, r: next(a), lambda w, r: next(b)], 1, 1, rounds=5, max_rounds=15)
    assert len(samples[0]) == 5 and list(verdicts(samples).values()) == ["level"]
    assert winner(samples, [3, 4]) == (0, [1])


def test_a_rival_never_settled_is_a_tie_when_the_rounds_run_out():
    from tilelang_core.runtime.autotune_search import final_round, winner

    # b is 20 % slower in median but faster in every third round: the sign test never passes, the gap is too
    # wide to be noise -> all 6 rounds, then a tie
    a = iter([1.0, 1.0, 1.0] * 2)
    b = iter([1.2, 1.2, 0.9] * 2)
    samples = final_round([lambda w, r: next(a), lambda w, r: next(b)], 1, 1, rounds=3, max_rounds=6)
    assert len(samples[0]) == 6 and winner(samples, [1, 0]) == (1, [0])


def test_a_ray_timing_worker_uses_the_drivers_kernel_threads(monkeypatch):
    from tilelang_core.runtime.autotune_search import cpu_thread_setting
    from tilelsp.cluster.autotune_tasks import use_cpu_threads

    monkeypatch.setenv("TVM_NUM_THREADS", "")  # unset (and restored after the test)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # what Ray gives a 1-CPU task
    assert cpu_thread_setting() == 1
    use_cpu_threads(None)  # the driver set nothing: one thread per CPU, as a local `tilelsp autotune`, not Ray's 1
    assert os.environ["TVM_NUM_THREADS"] == str(len(os.sched_getaffinity(0)))
    use_cpu_threads(3)
    assert cpu_thread_setting() == 3


@pytest.mark.tvm
def test_a_config_off_the_reference_fails_its_check_as_in_a_local_search(tmp_path):
    from tilelang_core.runtime.autotune_file import load_tuning

    path = tmp_path / "scale.py"
    path.write_text(TUNED.replace("return A * 3", "return A * 2"))
    tuning = load_tuning(str(path), path.read_text(), None, "cpu")
    with pytest.raises(AssertionError, match="output 'B'"):
        tuning.check(tuning.build(tuning.configs[0]))


@pytest.mark.tvm
def test_parallel_compile_skips_a_broken_config_and_the_best_is_remembered(tmp_path, monkeypatch):
    from tilelang_core.runtime.autotune_file import load_tuning

    monkeypatch.setenv("TILELSP_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "scale.py"
    path.write_text(TUNED)
    tuning = load_tuning(str(path), TUNED, None, "cpu")
    assert tuning.call == {"M": 64, "N": 8} and tuning.reference is not None and tuning.configs == CONFIGS
    result = tuning.tuner().run(warmup=1, rep=2, jobs=2, progress=False)
    assert result.config in CONFIGS[:2] and not result.cached and "CPU backend timing" in result.device
    assert [c for c, _ in result.failures] == [CONFIGS[2]] and len(result.timings) == 2
    assert "invalid-kernel" in str(result.failures[0][1])
    remembered = tuning.tuner().run(warmup=1, rep=2, progress=False)
    assert remembered.cached and remembered.config == result.config
    assert remembered.kernel.config == result.config


@pytest.mark.tvm
def test_the_autotune_command_prints_every_config_and_the_winner(tmp_path, monkeypatch, capsys):
    from tilelsp.cli import main

    monkeypatch.setenv("TILELSP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILELSP_RAY_ADDRESS", raising=False)
    monkeypatch.setenv("TVM_NUM_THREADS", "")  # the command sets it (one per CPU); restored after the test
    path = tmp_path / "tuned.py"
    path.write_text(TUNED)
    code = main(["autotune", str(path), "--device", "cpu", "--jobs", "1", "--warmup", "1", "--rep", "2", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and out["kernel"] == "scale" and out["call"] == {"M": 64, "N": 8}
    assert len(out["timings"]) == 2 and out["best"]["config"] in CONFIGS[:2] and len(out["failures"]) == 1
    assert os.environ["TVM_NUM_THREADS"] == str(len(os.sched_getaffinity(0)))  # as Ray workers will time
    assert main(["autotune", str(tmp_path / "missing.py")]) == 2


def test_the_server_reads_the_ray_address_setting():
    from tilelsp.cluster.connection import configured_address
    from tilelsp.server.settings import parse_settings

    assert configured_address(parse_settings({"ray": {"address": "ray://head:10001"}})[0]) == "ray://head:10001"
    assert configured_address(parse_settings({"ray.address": "local"})[0]) == "local"
    assert configured_address(parse_settings({"ray": {"address": ""}})[0]) is None
    assert configured_address(parse_settings(None)[0]) is None


def test_the_server_actions_pass_the_cluster_and_say_so(monkeypatch):
    import asyncio
    import itertools
    from types import SimpleNamespace

    from tilelsp.server import worker
    from tilelsp.server import commands
    from tilelsp.server.settings import parse_settings

    seen, shown = [], []
    reply = json.dumps({"best": {"config": {"block_M": 64}, "latency_ms": 1.5}, "device": "cuda:H200",
                        "timings": []})

    def fake_process(argv, *args, **kwargs):
        seen.append(argv)
        return 0, (reply if "autotune" in argv else json.dumps({"passed": True, "device": "cuda"})) + "\n", ""

    monkeypatch.setattr(worker, "run_process", fake_process)
    settings = parse_settings({"trustWorkspace": True, "ray": {"address": "ray://head:10001"}})[0]
    ls = SimpleNamespace(settings=settings, _tokens=itertools.count(), doc=lambda uri: SimpleNamespace(path="/k.py"),
                         client_capabilities=SimpleNamespace(window=None),
                         window_show_message=lambda params: shown.append(params.message))
    out = asyncio.run(commands.cmd_autotune(ls, "file:///k.py", "matmul"))
    assert seen[-1][-2:] == ["--ray", "ray://head:10001"] and out["ray"] == "ray://head:10001"
    assert "on the Ray cluster ray://head:10001" in shown[-1] and "{'block_M': 64}" in shown[-1]


def test_the_table_keeps_the_first_pass_and_marks_the_winner_on_its_own_row(capsys):
    from types import SimpleNamespace

    from tilelang_core.runtime.autotune import AutotuneResult, settle_final
    from tilelsp.cli.autotune import _print

    # the first pass ran while the machine was quiet, the final rounds under load: a finalist's final median is
    # 10x its first-pass figure, a non-finalist's first-pass figure is below the winner's final median
    result = AutotuneResult(timings=[({"b": 1}, 0.61), ({"b": 2}, 0.60), ({"b": 3}, 0.90), ({"b": 4}, 0.95),
                                     ({"b": 5}, 0.97)])
    settle_final(result, [1, 0, 2, 3], [[6.0] * 5, [12.0] * 5, [9.0] * 5, [7.0] * 5])
    assert result.config == {"b": 2} and result.latency == 6.0 and result.tied == []
    assert result.timings[1] == ({"b": 2}, 0.60)  # the first-pass row is not overwritten
    assert result.final[0] == ({"b": 2}, 6.0, 5)
    _print(result, SimpleNamespace(name="k", call={}), False, 1.0, None)
    rows = [line for line in capsys.readouterr().out.splitlines() if "{'b'" in line and "best" not in line]
    assert rows[0].startswith("*") and rows[0].split()[1:5] == ["0.6000", "ms", "6.0000", "ms"]
    assert "{'b': 2}" in rows[0] and [r.split()[-1] for r in rows] == ["2}", "4}", "3}", "1}", "5}"]
