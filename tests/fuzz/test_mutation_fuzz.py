"""A bounded slice of the frontend mutation fuzzing (the long run: benchmarks/fuzz_check.py)."""
import random

import pytest
from mutants import LIMIT_S, check_one, lower_one, mutants, mutate_once, seeds


def test_mutants_never_crash_hang_or_fail_internally():
    rng = random.Random(2026)
    problems = []
    for name, text in mutants(rng, 600):
        seconds, problem = check_one(text, limit_s=LIMIT_S * 2)  # the suite runs beside other work
        if problem:
            problems.append((name, problem))
    assert not problems, problems[:5]


def test_mutations_change_the_text():
    rng = random.Random(7)
    name, text = seeds()[0]
    changed = sum(mutate_once(text, rng) != text for _ in range(50))
    assert changed >= 40


@pytest.mark.tvm
def test_check_clean_mutants_lower_without_internal_errors():
    pytest.importorskip("tvm")
    rng = random.Random(11)
    lowered, problems = 0, []
    for name, text in mutants(rng, 400, max_mutations=1):
        ok, problem = lower_one(text)
        lowered += ok
        if problem:
            problems.append((name, problem))
        if lowered >= 8:
            break
    assert lowered >= 8 and not problems, problems[:3]
