"""Bounded work and validated instance values: inputs that used to hang, crash or pass unchecked."""
import time
from pathlib import Path

import pytest

from tilelang_core.check import check_source

GEMM = (Path(__file__).parents[2] / "examples" / "gemm.py").read_text()
CALL = "kernel = matmul(256, 256, 256, 128, 128, 32)"


def _check(text: str):
    start = time.perf_counter()
    result = check_source(text, "mutant.py")
    return result, time.perf_counter() - start


def _codes(result) -> list[tuple[str, str]]:
    return [(d.code, d.severity.value) for d in result.diagnostics]


@pytest.mark.parametrize("call, code", [
    ("matmul(10**100**100, 256, 256)", "instance-error"),   # the evaluator would compute it
    ("matmul(1 << 65536, 256, 256)", "instance-error"),      # too long to print
    ("matmul(pow(10, 10**9), 256, 256)", None),              # pow through the builtin is bounded too
    ("matmul(sum(range(10**18)), 256, 256)", None),
    ("matmul(256, 256, 256, num_stages=10**6)", "shared-memory-exceeded"),  # the fit search bisects
])
def test_huge_values_are_bounded(call, code):
    result, seconds = _check(GEMM.replace(CALL, f"kernel = {call}"))
    assert seconds < 2.0
    assert all(c != "internal-error" for c, _ in _codes(result))
    if code:
        assert code in [c for c, _ in _codes(result)]


@pytest.mark.parametrize("depth", [18, 60])
def test_nested_intrinsics_are_linear(depth):
    nested = "T.max(" * depth + "block_K" + ", 1)" * depth
    result, seconds = _check(GEMM.replace("T.ceildiv(K, block_K)", f"T.ceildiv(K, {nested})"))
    assert seconds < 1.0
    assert not result.errors


def test_deep_brackets_are_a_diagnostic():
    result, seconds = _check(GEMM.replace("block_M=128", "block_M=" + "(" * 200 + "128" + ")" * 200))
    assert seconds < 2.0 and result.errors


@pytest.mark.parametrize("args, fragment", [
    ("256, 256, 256, 0, 128, 32", "divides by zero"),
    ("256, 256, 256, -128, 128, 32", "must be positive"),
    ("float('inf'), 256, 256", "finite integer"),
    ("float('nan'), 256, 256", "finite integer"),
    ("2**40, 256, 256", "over int32"),
    ("256, 256, 256, num_stages=-1", "at least 0"),
])
def test_bad_instance_values_are_errors_at_the_users_line(args, fragment):
    result, _ = _check(GEMM.replace(CALL, f"kernel = matmul({args})"))
    bad = [d for d in result.errors if d.code == "invalid-value"]
    assert bad and any(fragment in d.message for d in bad), [d.message for d in result.diagnostics]
    assert all(d.span.line > 8 for d in bad)  # inside the factory, not line 1


def test_default_beyond_int32_is_an_error():
    text = GEMM.replace("block_M=128", "block_M=4294967296**64-1").replace(CALL, "kernel = matmul(256, 256, 256)")
    result, _ = _check(text)
    assert any(d.code == "invalid-value" and ("over int32" in d.message or "beyond 64 bits" in d.message)
               for d in result.errors)


def test_intrinsic_arity_is_checked():
    result, _ = _check(GEMM.replace("T.ceildiv(K, block_K)", "T.ceildiv(K)"))
    assert any(d.code == "bad-arguments" and "takes 2 value arguments" in d.message for d in result.errors)


def test_internal_failure_is_an_error(monkeypatch):
    from tilelang_core.frontend import handlers

    def boom(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(handlers.HANDLERS, "gemm", boom)
    result, _ = _check(GEMM)
    internal = [d for d in result.diagnostics if d.code == "internal-error"]
    assert internal and internal[0].is_error and "please report" in internal[0].message
    assert "T.gemm" in result.source.line_text(internal[0].span.line)


@pytest.mark.parametrize("old, new, code", [
    ("accum_dtype=T.float32", "accum_dtype=T.handle", "invalid-dtype"),            # a pointer as element type
    ("C[by * block_M, bx * block_N]", "C[by * block_M, float('inf')]", "bad-arguments"),  # a float index
    ("C[by * block_M, bx * block_N]", "C[by * block_M, bx << block_N]", "invalid-value"),  # shift past 31
    ("C[by * block_M, bx * block_N]", "C[by * block_M, bx ** block_N]", "unsupported-syntax"),  # integer ** at run time
    ("matmul(256, 256, 256, 128, 128, 32)", "matmul(256, 256, 2**31 - 1)", "invalid-value"),  # 32-bit indexing
    ("T.clear(C_local)", "T.fill(C_local, 1e308)", "invalid-value"),                # beyond float32
    ("A[by * block_M, ko * block_K]", "A[by and block_M, ko * block_K]", "unsupported-syntax"),  # `and` on ints
])
def test_lowering_crashes_found_by_fuzzing_are_diagnostics(old, new, code):
    result, _ = _check(GEMM.replace(old, new))
    assert code in [d.code for d in result.errors], [d.message for d in result.diagnostics]


def test_nesting_too_deep_for_pythons_parser_is_a_diagnostic():
    result, seconds = _check(GEMM.replace("block_M=128", "block_M=" + "-" * 100000 + "128"))
    assert seconds < 2.0
    assert [d.code for d in result.errors] == ["unsupported-syntax"]


def test_deeply_nested_call_arguments_stay_linear():
    nested = "block_M"
    for i in range(200):
        nested = ("T.max({}, 1)", "[{}]", "-{}", "int({})", "({} if 1 else 2)")[i % 5].format(nested)
    text = GEMM.replace("@tilelang.jit(out_idx=[-1])", f"@({nested})(out_idx=[-1])")
    assert min(_check(text)[1] for _ in range(3)) < 1.0


def test_no_false_errors_on_real_tilelang_idioms():
    """Idioms from the real TileLang examples that the new value checks must accept."""
    text = GEMM.replace("    main()\n", "    main()\n\nsizes = [int(x) for x in '64,128'.split(',') if x.strip()]\n")
    text = text.replace("T.clear(C_local)", "T.clear(C_local)\n            spare = T.alloc_local(0, accum_dtype)")
    result, _ = _check(text)
    assert not result.errors, [d.message for d in result.errors]
    from tilelang_core.frontend.consteval import Env, Evaluator
    import ast

    value = Evaluator(Env()).eval(ast.parse("[int(x) for x in '64,,128'.split(',') if x.strip()]", mode="eval").body)
    assert value == [64, 128]  # a truthy (not only `True`) filter keeps the item


def test_loop_variable_does_not_outlive_its_loop():
    text = GEMM.replace("T.copy(C_local, C[by * block_M, bx * block_N])", "T.copy(C_local, C[ko * block_M, bx * block_N])")
    result, _ = _check(text)
    assert [d.code for d in result.errors] == ["undefined-name"]
