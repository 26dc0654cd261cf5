"""Mutated kernel files (names and numbers swapped at random, fixed seed) never crash the frontend."""
from __future__ import annotations

import io
import random
import tokenize

from tilelang_core.codes import CODES
from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.frontend import parse_file
from tilelang_core.source import SourceFile

from test_frontend_parser import ATTENTION, GEMM

HEADER = "import tilelang\nimport tilelang.language as T\n"
REPLACEMENTS = ["A", "T", "None", "True", "dtype", "0", "-1", "2.5", "'float16'", "(1, 2)", "[]", "{}", "T.copy",
                "range", "k", "bx", "1 << 40", "T.infinity('float32')", "T.Parallel", "T.gemm"]


def _mutations(text: str, rng: random.Random, count: int):
    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type in (tokenize.NAME, tokenize.NUMBER) and t.start[0] == t.end[0]]
    for _ in range(count):
        lines = text.splitlines(keepends=True)
        for t in sorted(rng.sample(toks, 2), key=lambda t: t.start, reverse=True):
            line = lines[t.start[0] - 1]
            lines[t.start[0] - 1] = line[:t.start[1]] + rng.choice(REPLACEMENTS) + line[t.end[1]:]
        yield "".join(lines)


def test_mutated_kernels_never_crash():
    rng = random.Random(1234)
    for base in (GEMM, ATTENTION):
        for text in _mutations(HEADER + base, rng, 40):
            sink = DiagnosticSink()
            parse_file(SourceFile(text, "mutant.py"), sink)
            assert all(d.code in CODES for d in sink.items)
            assert not any("internal error" in d.message for d in sink.items), [d.message for d in sink.items]
