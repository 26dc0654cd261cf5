"""Instances: call sites, defaults, module constants, enclosing-function defaults, comments, overrides."""
from __future__ import annotations

from fe_helpers import errors, parse

from tilelang_core.ir import nodes as N
from tilelang_core.ir.arith import shape_ints

FACTORY = """
DIM = 256
SIZES = (DIM * 2, DIM)
dtype_default = T.float16

@tilelang.jit(out_idx=[-1])
def kernel(M, N, block=64, dtype=dtype_default):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            S = T.alloc_shared((block, N), dtype)
            T.copy(A[bx * block, 0], S)
            T.copy(S, B[bx * block, 0])
    return main
"""


def _shapes(kernels):
    return [shape_ints(k.params[0].shape) for k in kernels]


def test_literal_call_sites_positional_and_keyword():
    kernels, diags = parse(FACTORY + "\nk1 = kernel(1024, 512)\nk2 = kernel(M=64, N=32, block=32, dtype='bfloat16')\n")
    assert errors(diags) == []
    assert _shapes(kernels) == [(1024, 512), (64, 32)]
    assert kernels[1].params[0].dtype == "bfloat16"
    assert kernels[0].instance == "kernel(M=1024, N=512)"
    assert dict(kernels[1].bindings)["block"] == 32


def test_module_constants_and_arithmetic():
    kernels, _ = parse(FACTORY + "\nk = kernel(*SIZES, block=DIM // 4)\n")
    assert _shapes(kernels) == [(512, 256)]
    assert kernels[0].launch.grid[0].value == 8


def test_no_call_site_unknown_params_become_symbolic_without_errors():
    kernels, diags = parse(FACTORY)
    assert diags == []
    (k,) = kernels
    m, n = k.params[0].shape
    assert isinstance(m, N.Var) and m.kind == "symbolic" and m.name == "M"
    assert k.instance == "kernel(M=?, N=?)"
    assert k.params[0].dtype == "float16"


def test_enclosing_function_defaults():
    kernels, _ = parse(FACTORY + """
def main(M=2048, N=128):
    blk = 128
    k = kernel(M, N, block=blk)

if __name__ == "__main__":
    main()
""")
    assert _shapes(kernels) == [(2048, 128)] and dict(kernels[0].bindings)["block"] == 128


def test_argparse_defaults():
    kernels, _ = parse(FACTORY + """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--m", type=int, default=4096)
parser.add_argument("--n-size", type=int, default=64)
args = parser.parse_args()
k = kernel(args.m, args.n_size)
""")
    assert _shapes(kernels) == [(4096, 64)]


def test_comment_overrides_call_sites():
    kernels, _ = parse(FACTORY + "\n# tilelsp: kernel(M=32, N=16, block=16)\nk = kernel(1024, 512)\n")
    assert _shapes(kernels) == [(32, 16)]


def test_instances_argument_overrides_everything():
    kernels, _ = parse(FACTORY + "\nk = kernel(1024, 512)\n", instances={"kernel": [{"M": 8, "N": 8}, {"M": 16, "N": 8}]})
    assert _shapes(kernels) == [(8, 8), (16, 8)]


def test_distinct_instances_deduplicated_and_capped():
    calls = "\n".join(f"k{i} = kernel({64 * (i % 10 + 1)}, 64)" for i in range(20))
    kernels, _ = parse(FACTORY + "\n" + calls + "\nagain = kernel(64, 64)\n")
    assert len(kernels) == 8
    assert len({k.instance for k in kernels}) == 8


def test_unevaluable_arguments_fall_back():
    kernels, diags = parse(FACTORY + "\nimport torch\nk = kernel(torch.randn(3).shape[0], 64)\n")
    assert errors(diags) == []
    m, n = kernels[0].params[0].shape
    assert isinstance(m, N.Var) and m.kind == "symbolic" and n.value == 64


def test_factory_level_helper_values():
    kernels, diags = parse("""
import math

@tilelang.jit(out_idx=[-1])
def attn(seq=128, dim=64, block=32):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    n_blocks = T.ceildiv(seq, block)
    shape = [seq, dim]
    root = math.sqrt(dim)

    @T.prim_func
    def main(Q: T.Tensor(shape, "float32"), O: T.Tensor(shape, "float32")):
        with T.Kernel(n_blocks, threads=128) as bx:
            for i, j in T.Parallel(block, dim):
                O[bx * block + i, j] = Q[bx * block + i, j] * scale / root
    return main
""")
    assert errors(diags) == []
    (k,) = kernels
    assert k.launch.grid[0].value == 4
    store = [n for n in __import__("fe_helpers").nodes(k, N.Store)][0]
    text = __import__("tilelang_core.ir.printer", fromlist=["expr_str"]).expr_str(store.value)
    assert "0.18033688" in text and "8.0" in text


def test_dtype_spellings():
    for spelling, expected in (("T.float16", "float16"), ('"float"', "float32"), ("'bfloat16'", "bfloat16"),
                               ("T.float8_e4m3fn", "float8_e4m3fn")):
        kernels, diags = parse(FACTORY.replace("dtype_default = T.float16", f"dtype_default = {spelling}"))
        assert errors(diags) == [], spelling
        assert kernels[0].params[0].dtype == expected


def test_instance_errors_for_bad_calls_and_failed_asserts():
    src = FACTORY.replace("    @T.prim_func", "    assert N % block == 0\n\n    @T.prim_func") + """
a = kernel(128, 96)
b = kernel(128, 64, blok=32)
c = kernel(DIM // 0, 64)
d = kernel(1, 2, 3, T.float16, 5)
"""
    kernels, diags = parse(src)
    got = sorted((d.code, d.span.line, d.message.split(";")[0]) for d in diags)
    lines = {text.split(" = ")[0]: i for i, text in enumerate(("import tilelang\nimport tilelang.language as T\n\n"
                                                               + src).splitlines(), 1) if " = kernel(" in text}
    assert [g[0] for g in got] == ["instance-error"] * 5  # d also fails the assert (block=3)
    messages = " | ".join(g[2] for g in got)
    assert "`assert N % block == 0` fails for kernel(M=128, N=96)" in messages
    assert "has no parameter `blok`" in messages
    assert "cannot be evaluated (integer division or modulo by zero)" in messages
    assert "takes 4 positional arguments but this call passes 5" in messages
    assert {g[1] for g in got} >= {lines["b"], lines["c"], lines["d"]}
    assert all(not d.is_error for d in diags)


def test_values_from_the_main_guard_call():
    kernels, _ = parse(FACTORY + """
import argparse

def run(args, block=32):
    k = kernel(args.m, args.n, block=block)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=2048)
    parser.add_argument("--n", type=int, default=96)
    args = parser.parse_args()
    run(args, block=16)
""")
    assert _shapes(kernels) == [(2048, 96)] and dict(kernels[0].bindings)["block"] == 16


def test_comment_with_trailing_remark_and_several_comments():
    kernels, _ = parse(FACTORY + "\n# tilelsp: kernel(M=32, N=16)  # small case (fast)\n# tilelsp: kernel(M=64, N=16)\n")
    assert _shapes(kernels) == [(32, 16), (64, 16)]
