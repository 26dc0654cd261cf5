"""Seeded random tile IR: the analysis never raises and never reports an internal error, whatever the
shapes, scopes, dtypes and indices."""
from __future__ import annotations

import random

from analysis_irb import add, alloc, buf, c, full, kernel, load, loop, mul, run, sl, sp, store, var
from tilelang_core.ir import nodes as N

SCOPES = ("shared.dyn", "local.fragment", "local", "global", "local.var")
DTYPES = ("float16", "float32", "int8", "int32", "bfloat16", "float8_e4m3fn", "weird")


def _dim(rng, sym):
    return rng.choice([1, 2, 16, 64, 128, 0, -3, sym])


def _index(rng, vs):
    v = rng.choice(vs)
    return rng.choice([v, add(v, rng.randint(-2, 70)), mul(v, rng.choice([0, 2, 16])), c(rng.randint(-70, 70)),
                       N.BinOp("%", v, c(rng.choice([0, 7]))), N.BinOp("//", v, c(rng.choice([0, 3])))])


def _region(rng, b, vs):
    if rng.random() < 0.4:
        return full(b)
    axes = [(_index(rng, vs), c(rng.choice([1, 16, 64]))) if rng.random() < 0.6 else _index(rng, vs)
            for _ in range(rng.choice([len(b.shape), 1, 3]))]
    return sl(b, *axes)


def _random_kernel(rng):
    sym = var("n", rng.choice(["symbolic", "param"]))
    bufs = [buf(f"B{k}", tuple(_dim(rng, sym) for _ in range(rng.randint(1, 3))), rng.choice(DTYPES),
                rng.choice(SCOPES)) for k in range(4)]
    i, j = var("i"), var("j")
    vs = [i, j, sym]
    ops = [N.Copy(_region(rng, rng.choice(bufs), vs), _region(rng, rng.choice(bufs), vs), sp()),
           N.Gemm(*(_region(rng, rng.choice(bufs), vs) for _ in range(3)), rng.random() < .5, rng.random() < .5,
                  span=sp()),
           N.Reduce("max", _region(rng, rng.choice(bufs), vs), _region(rng, rng.choice(bufs), vs),
                    rng.randint(-3, 3), True, rng.randint(-3, 3), sp()),
           N.Fill(_region(rng, rng.choice(bufs), vs), c(0.0, "float32"), False, sp())]
    b = rng.choice(bufs)
    ops.append(store(b, tuple(_index(rng, vs) for _ in b.shape), load(b, *(_index(rng, vs) for _ in b.shape))))
    rng.shuffle(ops)
    body = loop((i, j), (rng.choice([8, 64, sym]), 4), ops[:3], rng.choice(["parallel", "serial", "pipelined"]),
                num_stages=rng.choice([None, 0, 3, -1]))
    allocs = [alloc(x) for x in bufs if x.scope != "global"]
    return kernel(allocs + [body, *ops[3:]], threads=(rng.choice([1, 100, 128, 4096, sym]),),
                  params=tuple(x for x in bufs if x.scope == "global"))


def test_random_kernels_never_crash():
    rng = random.Random(1234)
    for _ in range(300):
        diags, facts = run(_random_kernel(rng), ("sm_90a", "sm_80"))
        assert not [d.message for d in diags if d.code in ("instance-error", "internal-error")]
        assert facts.kernels
