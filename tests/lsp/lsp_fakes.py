"""Hand-built CheckResults (real Facts dataclasses, real SourceFile) for feature unit tests."""
from __future__ import annotations

from types import SimpleNamespace

from tilelang_core.analysis.facts import BufferFact, Facts, KernelFact
from tilelang_core.check import CheckResult
from pathlib import Path

from tilelang_core.source import SourceFile, Span

ROOT = Path(__file__).resolve().parents[2]
GEMM = '''import tilelang
import tilelang.language as T


def matmul(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=100) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=5):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
'''


def cursor(text: str) -> tuple[str, int, int]:
    """Strip a `<CURSOR>` marker: (text, 1-based line, code-point col)."""
    offset = text.index("<CURSOR>")
    clean = text.replace("<CURSOR>", "", 1)
    return (clean, *SourceFile(clean).position(offset))


def _find(text: str, needle: str, nth: int = 0) -> Span:
    src, start = SourceFile(text), -1
    for _ in range(nth + 1):
        start = text.index(needle, start + 1)
    line, col = src.position(start)
    return Span(line, col, line, col + len(needle))


def gemm_result(text: str = GEMM, diagnostics=()) -> CheckResult:
    """A CheckResult for GEMM-like text with the facts the analysis would give (matmul(1024, 1024, 1024))."""
    def line_span(needle):
        s = _find(text, needle)
        return Span(s.line, s.col, s.line, len(SourceFile(text).line_text(s.line)))

    bufs = [
        BufferFact("A_shared", "shared.dyn", (128, 32), "float16", 8192, _find(text, "A_shared"), "main", "matmul(1024)",
                   uses=[_find(text, "A_shared", 1), _find(text, "A_shared", 2)], stages=5),
        BufferFact("B_shared", "shared.dyn", (32, 128), "float16", 8192, _find(text, "B_shared"), "main", "matmul(1024)",
                   stages=5),
        BufferFact("C_local", "local.fragment", (128, 128), "float32", 65536, _find(text, "C_local"), "main", "matmul(1024)",
                   uses=[_find(text, "C_local", 1)]),
        BufferFact("A", "global", (1024, 1024), "float16", 2 << 20, _find(text, "A: T.Tensor"), "main", "matmul(1024)"),
    ]
    def_span = _find(text, "def main")
    kernel = KernelFact("main", "matmul", "matmul(1024)", def_span, _find(text, "main"),
                        line_span("T.Kernel("), grid=(8, 8), threads=100, smem_bytes={"sm_90a": 81920},
                        smem_breakdown=[("A_shared", 8192, 5), ("B_shared", 8192, 5)], smem_limit={"sm_90a": 232448},
                        registers=128)
    last = len(SourceFile(text).lines)
    body = SimpleNamespace(span=Span(def_span.line + 1, 8, last - 2, 60))
    func = SimpleNamespace(name="main", factory="matmul", instance="matmul(1024)", span=def_span,
                           name_span=kernel.name_span, body=body)
    return CheckResult(SourceFile(text, "/tmp/gemm.py"), [func], list(diagnostics), Facts(bufs, [kernel]), ("sm_90a",))
