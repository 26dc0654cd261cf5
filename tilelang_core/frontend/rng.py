"""Random numbers in a kernel (TileLang's curand Philox4x32-10 generator): `T.rng_init(seed, seq=None, off=0)`
seeds the thread's generator (`seq` defaults to the global thread index), `T.rng_rand()` is the next uint32 and
`T.rng_rand_float()` the next uniform float in (0, 1].

`Call("rng_init", (seed, seq, off))` with seq `Const(-1)` for the default, `Call("rng_rand", (), "uint32")`,
`Call("rng_rand_float", (), "float32")`.
"""
from __future__ import annotations

from ..ir import nodes as N
from .kernel_errors import KernelError

_GENERATOR = "curandStatePhilox4_32_10_t"
DRAW_CALLS = frozenset({"rng_rand", "rng_rand_float"})  # calls that advance the thread's generator


def _args(node, names):
    given = dict(zip(names, node.args))
    given.update({k.arg: k.value for k in node.keywords if k.arg in names})
    return given


def h_rng_init(p, b, node, short):
    """T.rng_init(seed, seq=None, off=0, generator="curandStatePhilox4_32_10_t")."""
    given = _args(node, ("seed", "seq", "off", "generator"))
    if "seed" not in given:
        raise KernelError("bad-arguments", "T.rng_init needs a seed", node)
    if "generator" in given and p.ev.eval(given["generator"]) != _GENERATOR:
        raise KernelError("unsupported-syntax", f"T.rng_init supports the generator \"{_GENERATOR}\" (the default)",
                          given["generator"])
    seq = given.get("seq")
    seq = N.Const(-1) if seq is None or p.ev.eval(seq) is None else p.ev.scalar(seq)
    off = p.ev.scalar(given["off"]) if "off" in given else N.Const(0)
    return N.Call("rng_init", (p.ev.scalar(given["seed"]), seq, off), "int32", p.span(node))


def h_rng_rand(p, b, node, short):
    """T.rng_rand(): the next 32 random bits of the thread's generator."""
    return N.Call("rng_rand", (), "uint32", p.span(node))


def h_rng_rand_float(p, b, node, short):
    """T.rng_rand_float(bit=32, dist="uniform"): the next uniform float32 in (0, 1]."""
    given = _args(node, ("bit", "dist"))
    bit = p.ev.eval(given["bit"]) if "bit" in given else 32
    dist = p.ev.eval(given["dist"]) if "dist" in given else "uniform"
    if bit != 32 or dist != "uniform":
        raise KernelError("unsupported-syntax", "T.rng_rand_float supports bit=32 with dist=\"uniform\"", node)
    return N.Call("rng_rand_float", (), f"float{bit}", p.span(node))


RNG_HANDLERS = {"rng_init": h_rng_init, "rng_rand": h_rng_rand, "rng_rand_float": h_rng_rand_float}
