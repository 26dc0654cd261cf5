"""A value bound by name that reads a buffer is read where it is bound on the CUDA path (a LetStmt), not at each
use: `A[0], A[1] = A[1], A[0]` swaps, as it does on the CPU backend and under TVMScript's own parser."""
from __future__ import annotations

import re
import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def swap_idx(A: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=1) as _:
        A[0], A[1] = A[1], A[0]

@T.prim_func
def swap_var(A: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=1) as _:
        a = T.alloc_var(T.float32, A[0])
        b = T.alloc_var(T.float32, A[1])
        a, b = b, a
        A[0], A[1] = a, b
"""


def _kernels():
    res = check_source(textwrap.dedent(SRC), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels


def _body_statements(source: str) -> list[str]:
    body = source[source.index("{", source.index('extern "C" __global__')) + 1:]
    code = "\n".join(line for line in body.splitlines() if not line.strip().startswith("//"))
    return [s.strip() for s in code.split(";") if "=" in s and "__global__" not in s]


@pytest.mark.parametrize("index", [0, 1])
def test_a_swap_swaps_in_the_generated_cuda(index):
    from tilelang_core.codegen.cuda import generate

    source = generate(_kernels()[index], "sm_90a").source
    env = {"A_ptr": [1.0, 2.0]}
    for stmt in _body_statements(source):  # straight-line code: run it as Python, one statement at a time
        stmt = re.sub(r"^(alignas\(\d+\) )?(float|int) ", "", stmt)
        env.update({name: [0.0] for name in re.findall(r"\b(\w+_ptr)\[", stmt) if name not in env})
        exec(stmt, {}, env)  # noqa: S102  (our own generated statements)
    assert env["A_ptr"] == [2.0, 1.0]


def test_the_builder_binds_a_buffer_read_where_it_is_bound():
    from tilelang_core.codegen.cuda.builder import build_prim_func, translate

    script = textwrap.dedent("""\
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            tx = T.launch_thread("threadIdx.x", 1)
            if tx == 0:
                v = A[1]
                A[1] = A[0]
                A[0] = v
            n = tx + 1
            A[3] = T.Cast("float32", n)
        """)
    code = translate(script)
    assert "v = BIND(A[1])" in code and "n = tx + 1" in code  # a value that reads no buffer still binds by name
    printed = str(build_prim_func(script))
    assert printed.count("A[1]") == 2 and "A[0] = v" in printed  # bound once (then stored to), never re-read
    assert "A[3] = T.Cast(\"float32\", tx + 1)" in printed
