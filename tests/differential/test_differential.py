"""A bounded slice of the differential testing: random valid kernels on the CPU backend against torch
(the long run: benchmarks/fuzz_differential.py)."""
import random

import pytest
from kernelgen import Program, random_program, run, source

from tilelang_core.check import check_source

pytestmark = pytest.mark.tvm


def test_generated_kernels_are_check_clean():
    rng = random.Random(5)
    for _ in range(60):
        p = random_program(rng)
        assert not check_source(source(p), "generated.py").errors, source(p)


def test_random_kernels_match_torch():
    pytest.importorskip("torch")
    pytest.importorskip("tvm")
    rng = random.Random(2026)
    failures = [(p, r) for p in (random_program(rng) for _ in range(4)) if (r := run(p))]
    assert not failures, [(source(p), r) for p, r in failures[:2]]


@pytest.mark.parametrize("program", [
    Program("map", 37, 24, bm=16, expr=("max", ("x",), ("c", 0.5)), reduce="max", post=True, seed=1),
    Program("gemm", 45, 33, K=50, bm=32, bn=16, bk=16, dtype="float16", num_stages=3, trans_b=True,
            loop="Pipelined", seed=2),
    Program("atomic", 50, 37, bm=8, bn=16, guard=True, seed=3),
    Program("colsum", 45, 37, bm=8, bn=16, dtype="float16", guard=True, seed=4),
], ids=["row-reduce-tail", "pipelined-gemm-tails", "guarded-atomic-tail", "colsum-atomic-of-reduced-fragment"])
def test_fixed_programs_match_torch(program):
    pytest.importorskip("torch")
    assert run(program) is None, source(program)
