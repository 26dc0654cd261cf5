"""A replicated fragment written inside a T.Parallel loop that a distributed fragment drives: each thread computes
only its own elements, so the lowering must hand every element to every thread (the H200 miscompile of
flash_decoding/example_mha_inference, where each thread kept only its own row of `scale_local`)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzzer_patterns"))
pytestmark = pytest.mark.tvm


def _cuda(case_name: str) -> str:
    import fuzz_layouts
    from fuzz_harness import kernel_ir

    from tilelang_core import lower

    case = next(c for c in fuzz_layouts.CASES if c.name.startswith(case_name))
    return lower(kernel_ir(case), target="sm_90a").source


def test_every_thread_reads_the_replicated_fragment_back_whole():
    src = _cuda("a replicated fragment written")
    body = src[src.index("k_kernel(float"):]
    assert re.search(r"sc_ptr\[\([^]]*threadIdx\.x[^]]*\)\] = exp2f", body), body  # only this thread's elements
    readback = re.search(r"for \(int (r_\w+) = 0; \1 < 128; \+\+\1\) \{\s*sc_ptr\[\1\] = \(\(float\*\)smem_ptr\)\[", body)
    assert readback, body
    # the loop writes only some elements (i % 3 != 0): the copy is filled from the registers before it
    prefill = body.index("smem_ptr)[((it * 64) + ((int)threadIdx.x))] = sc_ptr[")
    assert prefill < body.index("exp2f") < readback.start()
