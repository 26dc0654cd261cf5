"""Kernel discovery: import spellings, factories, top-level and eager kernels, out_idx."""
from __future__ import annotations

import textwrap

from fe_helpers import errors, parse

GEMM_BODY = """
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, 64), threads=128) as bx:
            for i in T.Parallel(64):
                B[0, bx * 64 + i] = A[0, bx * 64 + i]
"""


def _factory(header: str, deco: str = "@tilelang.jit(out_idx=[-1])") -> str:
    body = textwrap.indent(textwrap.dedent(GEMM_BODY).strip("\n"), "    ")
    return f"{header}\n\n{deco}\ndef copy_kernel(M=128, N=256):\n{body}\n    return main\n"


def test_real_tilelang_spelling():
    kernels, diags = parse(_factory("import tilelang\nimport tilelang.language as T"), header=False)
    assert [k.name for k in kernels] == ["main"] and errors(diags) == []
    assert kernels[0].factory == "copy_kernel" and kernels[0].out_idx == (-1,)


def test_tilelang_core_spelling_and_aliases():
    for header in ("import tilelang_core as tilelang\nimport tilelang_core.language as T",
                   "import tilelang\nfrom tilelang import language as T",
                   "import tilelang as tl\nimport tilelang.language as T",
                   "from tilelang import jit\nimport tilelang.language as T"):
        deco = "@tl.jit(out_idx=[-1])" if "as tl" in header else (
            "@jit(out_idx=[-1])" if "import jit" in header else "@tilelang.jit(out_idx=[-1])")
        kernels, diags = parse(_factory(header, deco), header=False)
        assert len(kernels) == 1, header
        assert kernels[0].out_idx == (-1,), header
        assert errors(diags) == [], header


def test_other_alias_for_language():
    src = _factory("import tilelang\nimport tilelang.language as TL").replace("T.", "TL.")
    kernels, diags = parse(src, header=False)
    assert len(kernels) == 1 and errors(diags) == []


def test_tvmscript_prim_func_is_not_a_kernel():
    src = "from tvm.script import tir as T\n\n@T.prim_func\ndef f(a: T.handle):\n    T.evaluate(0)\n"
    kernels, diags = parse(src, header=False)
    assert kernels == [] and diags == []


def test_top_level_prim_func_and_compile_out_idx():
    kernels, diags = parse("""
        @T.prim_func
        def add(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(128):
                    B[i] = A[i] + 1.0

        kernel = tilelang.compile(add, out_idx=[1])
    """)
    assert errors(diags) == []
    assert kernels[0].factory is None and kernels[0].instance == "" and kernels[0].out_idx == (1,)


def test_nested_factories():
    kernels, diags = parse("""
        def outer(heads=8, dim=64):
            @tilelang.jit(out_idx=[1])
            def inner(block_M=64, threads=128):
                @T.prim_func
                def main(Q: T.Tensor((heads, dim), "float16"), O: T.Tensor((heads, dim), "float16")):
                    with T.Kernel(heads, threads=threads) as bx:
                        S = T.alloc_shared((block_M, dim), "float16")
                        T.copy(Q[bx, 0], S[0, :])
                return main
            return inner
    """)
    assert errors(diags) == []
    (k,) = kernels
    assert k.factory == "outer" and k.out_idx == (1,)
    assert k.params[0].shape[0].value == 8


def test_eager_style_parses_without_false_errors():
    kernels, diags = parse("""
        @tilelang.jit
        def matmul(A, B, block_M=128, block_N=128, block_K=32, dtype=T.float16):
            M, N, K = T.const("M, N, K")
            A: T.Tensor((M, K), dtype)
            B: T.Tensor((K, N), dtype)
            C = T.empty((M, N), dtype)
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), T.float32)
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[by * block_M, bx * block_N])
            return C
    """)
    assert errors(diags) == []
    (k,) = kernels
    assert [p.name for p in k.params] == ["A", "B", "C"] and k.out_idx == (2,)
    assert [d.kind for d in k.params[0].shape] == ["symbolic", "symbolic"]


def test_lazy_style_prim_func_in_a_factory_is_checked_without_false_errors():
    kernels, diags = parse("""
        def make(M):
            @T.prim_func
            def kernel(A):
                A: T.Tensor[[M], T.float32]
                T.annotate_pass_configs({"tl.enable_fast_math": True})
                T.annotate_compile_flags(["--use_fast_math"])
                B = T.empty([M], T.float32)
                with T.Kernel(1):
                    for i in T.serial(M):
                        B[i] = A[i] + 1.0
                return B

            return kernel

        kernel = make(128)
    """)
    assert errors(diags) == []
    (k,) = kernels
    assert [p.name for p in k.params] == ["A", "B"] and k.out_idx == (1,)
    assert k.pass_configs == (("tl.enable_fast_math", True),) and k.compile_flags == ("--use_fast_math",)


def test_eager_compile_call_binds_const_dims():
    kernels, _ = parse("""
        @tilelang.jit
        def scale(A, block=64):
            N = T.const("N")
            A: T.Tensor((N,), T.float32)
            B = T.empty((N,), T.float32)
            with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = A[bx * block + i] * 2.0
            return B

        k = scale.compile(N=4096, block=128)
    """)
    (k,) = kernels
    assert k.params[0].shape[0].value == 4096
    assert k.launch.grid[0].value == 32 and k.launch.threads[0].value == 128
    assert k.instance == "scale(block=128, N=4096)"


def test_file_without_kernels():
    kernels, diags = parse("x = 1\n\ndef f():\n    return x\n")
    assert kernels == [] and diags == []
