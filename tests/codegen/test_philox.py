"""The pure-Python Philox4x32-10 both backends are checked against (tilelang_core/codegen/philox.py): Random123's
known-answer vectors, curand's stream semantics (skip-ahead, subsequences, counter carry) and curand_uniform."""
from __future__ import annotations

import pytest

from tilelang_core.codegen.philox import PhiloxStream, default_subsequence, philox4x32, uniform

# Random123's known answers for Philox4x32-10: (counter, key, output)
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]

# tl.randint4x(42, offset) for offsets 0, 1 and 32 (TRITON_INTERPRET=1), four words per offset, in order
TRITON_SEED42 = {0: [2632642643, 2012563771, 314527917, 1463989207], 1: [4242219303, 1404726525],
                 32: [2700622120, 1018086070, 3689554224, 2830907139, 1778550086, 49606125]}


@pytest.mark.parametrize("counter, key, output", KAT)
def test_known_answers(counter, key, output):
    assert philox4x32(counter, key) == output


def test_stream_is_tritons_randint4x_with_curands_offsets():
    assert PhiloxStream(42).take(6) == TRITON_SEED42[0] + TRITON_SEED42[1]
    assert PhiloxStream(42, 0, 128).take(6) == TRITON_SEED42[32]  # offset 128 skips 32 counters
    assert PhiloxStream(42, 0, 2).take(4) == TRITON_SEED42[0][2:] + TRITON_SEED42[1]  # the rest of counter 0 first


def test_subsequence_is_the_counters_high_words_and_the_key_is_the_seed():
    seed, seq = 0x0123456789ABCDEF, (7 << 32) | 5
    assert PhiloxStream(seed, seq, 0).take(4) == list(philox4x32((0, 0, 5, 7), (0x89ABCDEF, 0x01234567)))


def test_counter_carries_over_its_words():
    stream = PhiloxStream(1, 3, 4 * 0xFFFFFFFF + 3)  # the last output of counter (0xFFFFFFFF, 0, 3, 0)
    assert stream.next() == philox4x32((0xFFFFFFFF, 0, 3, 0), (1, 0))[3]
    assert stream.take(4) == list(philox4x32((0, 1, 3, 0), (1, 0)))


def test_offsets_and_draws_are_the_same_stream():
    whole = PhiloxStream(9, 4, 0).take(40)
    assert all(PhiloxStream(9, 4, k).take(40 - k) == whole[k:] for k in range(40))


def test_uniform_is_curands_float32_in_0_1():
    assert uniform(0) == 2.0 ** -33 and uniform(0xFFFFFFFF) == 1.0
    assert uniform(2632642643) == pytest.approx(2632642643 * 2.0 ** -32, abs=1e-7)
    assert uniform(2 ** 23 + 1) == (2 ** 23 + 2) * 2.0 ** -32  # x + 0.5 ties to even in float32


def test_default_subsequence_is_threadidx_x_plus_blockidx_x_times_blockdim_x():
    assert default_subsequence(5, 3, 32) == 101
