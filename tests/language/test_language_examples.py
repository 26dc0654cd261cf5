"""The examples: real-TileLang style files, and one marked mistake per file under examples/errors/."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tilelang_core.codes import CODES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KERNELS = sorted(p for p in EXAMPLES.glob("*.py"))
ERRORS = sorted((EXAMPLES / "errors").glob("*.py"))
MARK = re.compile(r"#\s*(error|warning):\s*\[([a-z0-9-]+)\]")
REQUIRED = {"gemm.py", "gemm_bf16.py", "gemm_transposed_b.py", "elementwise_add.py", "softmax.py", "rmsnorm.py",
            "flash_attention.py", "dequant_gemm.py"}
REQUIRED_CODES = {"copy-shape-mismatch", "copy-extent-mismatch", "gemm-shape-mismatch", "gemm-dtype-mismatch",
                  "gemm-accumulator-shape", "shared-memory-exceeded", "threads-exceeded", "layout-shape-mismatch",
                  "index-out-of-bounds", "local-indexed-by-parallel", "nested-parallel", "tile-op-in-parallel",
                  "reduce-dim-out-of-range", "reduce-shape-mismatch", "undefined-name", "unsupported-syntax",
                  "syntax-error"}


def test_required_examples_exist():
    assert REQUIRED <= {p.name for p in KERNELS}


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_example_shape(path):
    tree = ast.parse(path.read_text())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "ref_program" in funcs and "main" in funcs
    imports = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert {"tilelang", "tilelang.language"} <= imports
    decorated = [f for f in funcs.values() if any("tilelang.jit" in ast.unparse(d) for d in f.decorator_list)]
    assert decorated, "no @tilelang.jit factory"
    lazy = [f for f in decorated if "T.prim_func" in ast.unparse(f)]  # eager kernels are called with tensors
    factory_names = {f.name for f in lazy}
    calls = [c for c in ast.walk(funcs["main"]) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
             and c.func.id in factory_names]
    assert all(isinstance(a, ast.Constant) for c in calls for a in c.args), "literal call sites in main()"
    assert calls or not lazy, "main() never instantiates the factory"
    assert "assert_close" in ast.unparse(funcs["main"])


@pytest.mark.parametrize("path", ERRORS, ids=lambda p: p.name)
def test_error_file_has_one_mistake_with_known_markers(path):
    """One deliberate mistake per file: one code (it may fire on several lines, e.g. both copies of a K loop) or
    one line (a mistake two rules see, e.g. a tile past the tensor that also leaves part of it unwritten)."""
    marks = [(i, m) for i, line in enumerate(path.read_text().splitlines(), 1) for m in MARK.finditer(line)]
    assert marks
    assert len({m.group(2) for _, m in marks}) == 1 or len({i for i, _ in marks}) == 1, marks
    for _, m in marks:
        assert m.group(2) in CODES, m.group(2)
        assert CODES[m.group(2)].severity.value == m.group(1)


def test_every_required_error_class_has_a_file():
    found = {MARK.search(p.read_text()).group(2) for p in ERRORS}
    assert REQUIRED_CODES <= found, REQUIRED_CODES - found


def test_every_builtin_used_in_the_examples_is_in_the_registry():
    from tilelang_core.language.registry import lookup

    used = set()
    for path in [*KERNELS, *ERRORS]:
        used |= set(re.findall(r"\bT\.[A-Za-z_]\w*(?:\.[A-Z]\w*)?", path.read_text()))
    missing = sorted(n for n in used if lookup(n) is None and n != "T.alloc_shard")  # the unknown-builtin example
    assert not missing, missing
