"""TileLang's eager AST rewriter (`tilelang.language.eager.ast`) imports and refuses under the alias; the construct
its tests cover, an augmented assignment that rebinds an immutable scalar (`x = A[0]; x -= 1`), compiles and runs."""
from __future__ import annotations


import pytest


def test_eager_ast_imports_and_refuses(tilelang):
    from tilelang.language.eager.ast import mutate
    from tilelang_core.compat import UnsupportedFeatureError

    with pytest.raises(UnsupportedFeatureError, match="eager-mode AST rewriter"):
        mutate(lambda a: a + 1)


@pytest.mark.tvm
def test_augmented_assignment_rebinds_a_scalar_on_the_cpu(tilelang):
    import torch

    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor[(1,), T.int32], B: T.Tensor[(1,), T.int32]):
        with T.Kernel(1, threads=1):
            x = A[0]
            x -= 1
            x *= 3
            B[0] = x

    kernel = tilelang.compile(main, target="c")
    b = torch.zeros(1, dtype=torch.int32)
    kernel(torch.tensor([5], dtype=torch.int32), b)
    assert b.item() == 12
