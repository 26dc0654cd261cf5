"""Element reads and writes of global tensors in the kernel's own code are bounds-guarded on CUDA, as TileLang's
LegalizeSafeMemoryAccess guards them (reads outside give 0, writes outside are skipped); accesses TVM can prove
in bounds keep no guard."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzzer_patterns"))
pytestmark = pytest.mark.tvm


def _body() -> str:
    import fuzz_layouts
    from fuzz_harness import kernel_ir

    from tilelang_core import lower

    case = next(c for c in fuzz_layouts.CASES if c.name.startswith("global element reads and writes outside"))
    src = lower(kernel_ir(case), target="sm_90a").source
    return src[src.index("__global__ void"):]


def test_gathered_reads_and_scattered_writes_are_guarded_and_provable_ones_are_not():
    body = _body()
    assert re.search(r"if \(\(0 <= (Idx_ptr\[[^\]]*\])\) && \(\1 < 32\)\) \{\s*(\w+) = X_ptr\[[^\n]*\n\s*\} else "
                     r"\{\s*\2 = 0x0p\+0f", body), body
    assert re.search(r"if \(\(0 <= (P_ptr\[[^\]]*\])\) && \(\1 < 48\)\) \{\s*O2_ptr\[", body), body
    o_store = re.search(r"\n(\s*)O_ptr\[[^\n]*\] = ", body)  # provably inside O: no guard around it
    assert o_store and body[:o_store.start()].rstrip().endswith("}"), body
    assert re.search(r"if \(\(0 <= (Idx_ptr\[[^\]]*\])\) && \(\1 < 32\)\) \{\s*tl::atomic_add\(\(&\(H_ptr\[", body), body
