"""`T.Parallel(..., loop_layout=frag)` with a T.Fragment built on the host, writing a fragment whose T.annotate_layout
(also built on the host) gives its elements to other threads: layout-infer-conflict at the write, as TileLang's
"Layout infer conflict"; a loop layout whose threads hold what they write compiles and runs on the CPU backend."""
from __future__ import annotations

import pytest

import tilelang_core as tilelang
import tilelang_core.language as T
from tilelang_core.diagnostics import CompileError

pytestmark = pytest.mark.tvm


def _kernel(loop_fn, loop_replicate: int):
    buffer_layout = T.Fragment((8, 4), forward_fn=lambda i, j, rep: (i * 4 + j + rep * 32, 0), replicate=2)
    loop_layout = T.Fragment((8, 4), forward_fn=loop_fn, replicate=loop_replicate)

    @T.prim_func
    def main(O: T.Tensor((8, 4), T.float32)):
        with T.Kernel(1, threads=64):
            frag = T.alloc_fragment((8, 4), T.float32)
            T.annotate_layout({frag: buffer_layout})
            for i, j in T.Parallel(8, 4, loop_layout=loop_layout):
                frag[i, j] = T.float32(i * 4 + j)
            T.copy(frag, O)

    return main


def test_a_loop_layout_writing_elements_other_threads_hold_is_a_layout_infer_conflict():
    spread = lambda i, j, rep: (i * 4 + rep % 4 + (rep // 4) * 32, j)  # noqa: E731 -- four threads per row
    with pytest.raises(CompileError, match="Layout infer conflict") as err:
        tilelang.compile(_kernel(spread, 8), target="cpu")
    (diag,) = err.value.diagnostics
    assert diag.code == "layout-infer-conflict" and "frag[0, 0] is held by threads [0, 32]" in diag.message
    assert diag.span.line == _kernel.__code__.co_firstlineno + 10  # the write `frag[i, j] = ...`


def test_a_loop_layout_whose_threads_hold_their_elements_runs():
    torch = pytest.importorskip("torch")
    same = lambda i, j, rep: (i * 4 + j + rep * 32, 0)  # noqa: E731 -- the buffer's own owners
    kernel = tilelang.compile(_kernel(same, 2), target="cpu")
    out = torch.zeros(8, 4)
    kernel(out)
    assert torch.equal(out, torch.arange(32, dtype=torch.float32).reshape(8, 4))
