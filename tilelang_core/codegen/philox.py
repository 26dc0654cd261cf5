"""Philox4x32-10 with curand's state semantics, shared by both backends: the constants they emit and a pure-Python
reference of the stream a thread draws (`T.rng_init(seed, seq, off)`, then `T.rng_rand()` / `T.rng_rand_float()`).

curand_init(seed, subsequence, offset): key = the seed's two 32-bit halves, counter = (offset // 4 in words 0-1,
subsequence in words 2-3), the first `offset % 4` outputs of that counter skipped. Each counter gives four uint32
outputs in order; after the fourth the counter goes up by one (with carry over all four words). curand_uniform maps
an output u to float32(u) * 2**-32 + 2**-33, in (0, 1].
"""
from __future__ import annotations

import struct

M0, M1 = 0xD2511F53, 0xCD9E8D57  # round multipliers (of counter words 0 and 2)
W0, W1 = 0x9E3779B9, 0xBB67AE85  # key schedule: added to key words 0 and 1 after each round
ROUNDS = 10
UNIFORM_SCALE = 2.0 ** -32  # exactly float32 2.3283064e-10f, so x * scale + shift rounds once, fused or not
UNIFORM_SHIFT = 2.0 ** -33
MASK32 = 0xFFFFFFFF
DRAW_CALLS = frozenset({"rng_rand", "rng_rand_float"})  # the tile-IR calls that advance a thread's generator


def philox4x32(counter: tuple, key: tuple, rounds: int = ROUNDS) -> tuple:
    """The four output words of Philox4x32 for a counter of four words and a key of two."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(rounds):
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & MASK32
        k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
    return c0, c1, c2, c3


def to_float32(x: float) -> float:
    """`x` rounded to the nearest float32 (ties to even)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def uniform(u: int) -> float:
    """curand_uniform of one output word: float32(u) * 2**-32 + 2**-33, rounded once to float32."""
    return to_float32(to_float32(float(u)) * UNIFORM_SCALE + UNIFORM_SHIFT)


def default_subsequence(thread_x: int, block_x: int, threads_x: int) -> int:
    """`T.rng_init(seed)` without a seq: threadIdx.x + blockIdx.x * blockDim.x, as TileLang computes it."""
    return thread_x + block_x * threads_x


class PhiloxStream:
    """One thread's generator after `T.rng_init(seed, seq, off)`: `next()` is T.rng_rand, `uniform()` T.rng_rand_float."""

    def __init__(self, seed: int, seq: int = 0, off: int = 0):
        seed, seq, off = seed & 0xFFFFFFFFFFFFFFFF, seq & 0xFFFFFFFFFFFFFFFF, off & 0xFFFFFFFFFFFFFFFF
        self.key = (seed & MASK32, seed >> 32)
        self.counter = (off >> 2) | (seq << 64)  # the four words as one 128-bit integer, word 0 lowest
        self.index = off & 3
        self.output = self._block()

    def _block(self) -> tuple:
        words = tuple((self.counter >> (32 * w)) & MASK32 for w in range(4))
        return philox4x32(words, self.key)

    def next(self) -> int:
        """The next uint32 output."""
        value = self.output[self.index]
        self.index += 1
        if self.index == 4:
            self.counter = (self.counter + 1) & ((1 << 128) - 1)
            self.output, self.index = self._block(), 0
        return value

    def uniform(self) -> float:
        """The next output as a float32 in (0, 1]."""
        return uniform(self.next())

    def take(self, n: int) -> list:
        """The next `n` uint32 outputs."""
        return [self.next() for _ in range(n)]
