"""The reducer epoch (T.reducer_init / T.reducer_update / T.finalize_reducer(acc, dst)): CPU numerics against torch,
each Parallel iteration counted once on CUDA (nvcc), and the epoch rules reported at the user's line."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

EPOCH = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((16, 64), T.{dtype}), B: T.Tensor((16,), T.{dtype})):
    with T.Kernel(1, threads=128):
        src = T.alloc_fragment((16, 64), T.{dtype})
        T.copy(A, src)
        acc = T.alloc_reducer((16,), T.{dtype}, op="{op}")
        T.reducer_init(acc{seed})
        for i, j in T.Parallel(16, 64):
            T.reducer_update(acc[i], src[i, j])
        result = T.alloc_fragment((16,), T.{dtype})
        T.finalize_reducer(acc, result)
        T.copy(result, B)
"""

SHORT_LOOP = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.float32), B: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128):
        src = T.alloc_fragment((8,), T.float32)
        T.copy(A, src)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc, 100.0)
        for i in T.Parallel(8):
            T.reducer_update(acc[0], src[i])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        if T.get_thread_binding() == 0:
            B[0] = result[0]
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def _reference(torch, a, op):
    if op == "sum":
        return a.float().sum(dim=1).to(a.dtype)
    if op in ("max", "min"):
        return getattr(a, f"a{op}")(dim=1)
    out = a[:, 0].clone()
    for col in range(1, a.shape[1]):
        out = {"bitand": out & a[:, col], "bitor": out | a[:, col], "bitxor": out ^ a[:, col]}[op]
    return out


@pytest.mark.tvm
@pytest.mark.parametrize("op,dtype", [("sum", "float32"), ("max", "bfloat16"), ("min", "float16"),
                                      ("bitand", "int32"), ("bitor", "int32"), ("bitxor", "int32")])
def test_epoch_on_the_cpu_matches_torch(op, dtype):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    mod = cpu.build(_kernel(EPOCH.format(dtype=dtype, op=op, seed="")))
    a = torch.randint(0, 2**30, (16, 64), dtype=torch.int32) if dtype == "int32" else \
        torch.randn(16, 64).to(getattr(torch, dtype))
    b = torch.zeros(16, dtype=a.dtype)
    mod(a, b)
    torch.testing.assert_close(b, _reference(torch, a, op), atol=1e-2, rtol=1e-2)


@pytest.mark.tvm
def test_a_sum_seed_is_added_once():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.arange(1, 9, dtype=torch.float32), torch.zeros(1)
    cpu.build(_kernel(SHORT_LOOP))(a, b)
    assert b.item() == 136.0


@pytest.mark.tvm
def test_a_seed_read_from_a_per_thread_fragment_is_taken_at_the_init():
    """The seed is read where T.reducer_init stands: each thread's copy of a scalar-only fragment, before it is
    overwritten (the CPU backend once read it outside any thread)."""
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    src = SHORT_LOOP.replace("T.reducer_init(acc, 100.0)", "seed = T.alloc_fragment((1,), T.float32)\n"
                             "        seed[0] = 5.0\n        T.reducer_init(acc, seed[0])\n        seed[0] = 100.0")
    a, b = torch.arange(1, 9, dtype=torch.float32), torch.zeros(1)
    cpu.build(_kernel(src))(a, b)
    assert b.item() == 41.0


@pytest.mark.tvm
@pytest.mark.nvcc
def test_each_iteration_of_a_replicated_loop_updates_one_partial_on_cuda():
    """Parallel(8) over 128 threads: the partial update sits under the iteration's owner-thread guard, so the
    block-wide combine counts each element once (TileLang issue #2408: 576 instead of 36)."""
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SHORT_LOOP), "sm_90a")
    lines = ck.tvmscript.splitlines()
    at = next(k for k, line in enumerate(lines) if line.strip().startswith("acc[") and "+" in line)
    assert lines[at - 1].strip().startswith("if") and "tx" in lines[at - 1], lines[at - 2:at + 1]
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("op,dtype", [("max", "bfloat16"), ("bitxor", "int32")])
def test_epochs_compile_for_sm90a(op, dtype):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(EPOCH.format(dtype=dtype, op=op, seed="")), "sm_90a")
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def _body(lines: str) -> str:
    return ("import tilelang.language as T\n\n@T.prim_func\n"
            "def k(A: T.Tensor((8,), T.float32), B: T.Tensor((1,), T.float32)):\n"
            "    with T.Kernel(1, threads=128):\n"
            "        src = T.alloc_fragment((8,), T.float32)\n"
            "        T.copy(A, src)\n"
            "        acc = T.alloc_reducer((1,), T.float32, op=\"sum\")\n"
            "        result = T.alloc_fragment((1,), T.float32)\n"
            + textwrap.indent(textwrap.dedent(lines), " " * 8) + "        B[0] = result[0]\n")


_UPDATE = "for i in T.Parallel(8):\n    T.reducer_update(acc[0], src[i])\n"
_FINAL = "T.finalize_reducer(acc, result)\n"


@pytest.mark.parametrize("lines,line,words", [
    ("T.reducer_init(acc)\nT.reducer_init(acc)\n" + _UPDATE + _FINAL, 11, "double T.reducer_init"),
    (_UPDATE + _FINAL, 11, "before T.reducer_init"),
    ("T.reducer_init(acc)\n" + _UPDATE, 10, "never finalized"),
    ("T.reducer_init(acc)\nfor i in T.Parallel(8):\n    acc[0] += src[i]\n" + _FINAL, 12, "illegal store to reducer"),
    ("T.reducer_init(acc)\n" + _UPDATE + "B[0] = acc[0]\n" + _FINAL, 13, "illegal read of reducer"),
    ("T.clear(acc)\n" + _UPDATE + _FINAL, 10, "illegal store to reducer"),
    ("T.reducer_init(acc)\nT.reducer_update(acc[0], src[0])\n" + _FINAL, 11, "outside any T.Parallel"),
    ("for _ in T.serial(4):\n    T.reducer_init(acc)\n    " + _UPDATE.replace("\n    ", "\n        ") + _FINAL, 14,
     "not in the scope of its T.reducer_init"),
    ("T.reducer_init(acc, T.float16(1.0))\n" + _UPDATE + _FINAL, 10, "does not match reducer"),
    ("T.reducer_init(acc)\n" + _UPDATE + "T.finalize_reducer(acc, result, batch=0)\n", 13, "batch must be >= 1"),
])
def test_epoch_rules_are_reported_at_the_line(lines, line, words):
    res = check_source(_body(lines), "<test>")
    errs = [d for d in res.errors if d.code in ("reducer-epoch", "invalid-value")]
    assert errs and words in errs[0].message and errs[0].span.line == line, \
        [(d.code, d.span.line, d.message) for d in res.diagnostics]


def test_a_bitwise_reducer_needs_an_integer_dtype():
    src = _body("T.reducer_init(acc)\n" + _UPDATE + _FINAL).replace('op="sum"', 'op="bitand"')
    res = check_source(src, "<test>")
    assert any("integer dtype" in d.message for d in res.errors), [d.message for d in res.diagnostics]


@pytest.mark.tvm
def test_an_in_place_reducer_in_a_replicated_loop_counts_each_iteration_once():
    """`red[i] += A[i]` over Parallel(128, 4): 4 * A on the CPU, and on CUDA each iteration on its owner thread."""
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    func = _kernel("""
    import tilelang.language as T

    @T.prim_func
    def k(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            red = T.alloc_reducer((128,), T.float32, replication="all")
            T.clear(red)
            for i, j in T.Parallel(128, 4):
                red[i] += A[i]
            T.finalize_reducer(red)
            T.copy(red, B)
    """)
    a, b = torch.randn(128), torch.zeros(128)
    cpu.build(func)(a, b)
    torch.testing.assert_close(b, 4 * a)
    assert "T.floormod(" in generate(func, "sm_90a").tvmscript
