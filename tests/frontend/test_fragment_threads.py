"""The thread map of an annotated T.Fragment: its lambda evaluated for every element (module constants included),
none for the replicated (i, rep) form or a function the parser cannot evaluate."""
from __future__ import annotations

from fe_helpers import parse

from tilelang_core.ir import nodes as N
from tilelang_core.ir.visitor import walk

SRC = """
import tilelang.language as T

OFFSET = 32


@T.prim_func
def k(A: T.Tensor((2, 64), T.float32), B: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=128):
        x = T.alloc_fragment((2, 64), T.float32)
        s = T.alloc_fragment((2,), T.float32)
        T.annotate_layout({
            x: T.Fragment(x.shape, forward_fn=lambda i, j: (OFFSET + i * 32 + j // 2, j % 2)),
            s: T.Fragment(s.shape, forward_fn=lambda i, rep: (OFFSET + i * 32 + rep, 0), replicate=32),
        })
        T.copy(A, x)
        T.reduce_sum(x, s, dim=1)
        T.copy(s, B)
"""


def test_the_thread_of_each_element_of_an_annotated_fragment():
    kernels, diags = parse(SRC)
    assert not [d for d in diags if d.is_error]
    spec = next(n for n in walk(kernels[0].body) if isinstance(n, N.AnnotateLayout))
    (_, x_spec), (_, s_spec) = spec.entries
    assert x_spec.threads == tuple(32 + i * 32 + j // 2 for i in range(2) for j in range(64))
    assert s_spec.threads is None  # (i, rep): a replicated fragment has no single thread per element
