"""`tvm.tirx.stmt_functor` (TileLang's bundled TVM has it; apache-tvm 0.27 does not): `post_order_visit` over the
tile IR that a `@T.prim_func`'s `.body` gives under the alias."""
from __future__ import annotations

from ..ir.visitor import children
from ..language.arg_checks import is_tvm_object
from . import UnsupportedFeatureError

__all__ = ["post_order_visit"]


def post_order_visit(node, fvisit) -> None:
    """Call `fvisit` on every IR node under `node` (itself included), children before their parent."""
    if is_tvm_object(node):
        raise UnsupportedFeatureError("tvm.tirx.stmt_functor.post_order_visit on TVM IR",
                                      "tilelang_core's kernels are tile IR: visit a @T.prim_func's `.body`")
    stack = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            fvisit(current)
            continue
        stack.append((current, True))
        stack.extend((child, False) for child in reversed(list(children(current))))
