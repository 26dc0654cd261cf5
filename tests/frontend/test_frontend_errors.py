"""Frontend diagnostics: each code at the user's position, messages that name the fix, and recovery."""
from __future__ import annotations

import pytest
from fe_helpers import errors, line_of, nodes, parse

from tilelang_core.codes import CODES
from tilelang_core.ir import nodes as N

KERNEL = """
@T.prim_func
def k(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), T.float16)
        T.copy(A, S)
        {line}
        T.copy(S, B)
"""


def _one(line: str):
    src = KERNEL.replace("{line}", line)
    kernels, diags = parse(src)
    return src, kernels, [d for d in diags if d.is_error]


@pytest.mark.parametrize("line, code, words", [
    ("T.copy(Sh, B)", "undefined-name", ["Sh", "did you mean 'S'"]),
    ("T.alloc_shard((64, 64), T.float16)", "unknown-builtin", ["T.alloc_shard", "T.alloc_shared"]),
    ("X = T.alloc_shared((64, 64))", "bad-arguments", ["dtype"]),
    ("X = T.alloc_shared((64, 64), 'half16')", "invalid-dtype", ["half16"]),
    ("S[0] = 1.0", "buffer-rank-mismatch", ["2 dimensions", "1"]),
    ("break", "unsupported-syntax", ["break", "outside a loop"]),
    ("while True:\n            pass\n        else:\n            pass", "unsupported-syntax", ["while ... else"]),
    ("f = lambda x: x", "unsupported-syntax", ["lambda"]),
    ("xs = [i for i in T.serial(4)]", "unsupported-syntax", ["comprehension"]),
    ("print(S)", "unsupported-syntax", ["T.print"]),
    ("del S", "unsupported-syntax", ["del"]),
    ("try:\n            pass\n        except Exception:\n            pass", "unsupported-syntax", ["try"]),
    ("global G", "unsupported-syntax", ["global"]),
    ("S[0, 0] @= 2", "unsupported-syntax", ["`@=`", "T.gemm"]),  # was an internal error (KeyError)
    ("with T.Kernel(1, 2, 3, 4) as (a, b, c, d):\n            pass", "invalid-kernel", ["at most 3", "got 4"]),
    ("T.gemm(S, S)", "bad-arguments", ["C"]),
    ("T.reduce_max(S, S, dim=T.float32(0.5))", "bad-arguments", ["dim"]),
    ("for i in T.Parallel(4, 4):\n            pass", "bad-arguments", ["2 extents", "1 variable"]),
    ("S[0, 0] = T.ieee_add(S[0, 0], S[0, 1], 'rz')", "ieee-unsupported", ["Only rounding mode 'rn'", "float16"]),
    ("S[0, 0] = T.ieee_frsqrt(T.float64(2.0))", "ieee-unsupported", ["not supported for float64"]),
    ("S[0, 0] = T.atomic_load(A[0, 0], memory_order='release')", "invalid-memory-order",
     ["does not support memory_order 'release'"]),
    ("S[0:64:2, 0] = 0", "slice-step", ["with a step"]),
    ("V = T.reshape(S, (64, 65))", "reshape-size-mismatch", ["8,192 bytes", "8,320 bytes"]),
])
def test_each_error_code(line, code, words):
    src, _, errs = _one(line)
    assert [d.code for d in errs] == [code], [d.message for d in errs]
    d = errs[0]
    assert d.span.line == line_of(src, line.splitlines()[0]) and d.kernel == "k"
    for w in words:
        assert w in d.message, d.message
    assert code in CODES


def test_nested_def_must_be_a_macro():
    _, _, errs = _one("def helper(x):\n            return x")
    assert [d.code for d in errs] == ["unsupported-syntax"] and "@T.macro" in errs[0].message


def test_three_independent_errors_give_three_diagnostics():
    src = """
@T.prim_func
def k(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        S = T.alloc_shared((64,), T.float32)
        T.copy(A, S_missing)
        f = lambda x: x
        T.fill(S, T.sqrtt(2.0))
        T.copy(S, A)
"""
    _, diags = parse(src)
    assert errors(diags) == [("undefined-name", line_of(src, "S_missing")),
                             ("unsupported-syntax", line_of(src, "lambda")),
                             ("unknown-builtin", line_of(src, "T.sqrtt"))]


def test_failed_definition_is_reported_once():
    src = """
@T.prim_func
def k(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        S = T.alloc_shared((64,), "floaty")
        T.copy(A, S)
        T.copy(S, A)
        S[0] = 1.0
"""
    _, diags = parse(src)
    assert errors(diags) == [("invalid-dtype", line_of(src, "floaty"))]


def test_syntax_error_position_and_no_crash():
    src = "import tilelang.language as T\n\n@T.prim_func\ndef k(A: T.Tensor((4,), T.float32):\n    pass\n"
    kernels, diags = parse(src, header=False)
    assert kernels == []
    (d,) = diags
    assert d.code == "syntax-error" and d.span.line == 4 and d.span.col >= 5


@pytest.mark.parametrize("text", ["", "\x00", "def (", "@T.prim_func\n", "with T.Kernel(:\n", "é = 1\n" * 3,
                                  "import tilelang.language as T\n@T.prim_func\ndef k():\n    with T.Kernel(1): T.copy()\n"])
def test_bad_input_never_crashes(text):
    kernels, diags = parse(text, header=False)
    assert all(d.code in CODES for d in diags)


def test_kernel_without_launch_and_missing_annotation():
    src = """
@T.prim_func
def k(A, B: T.Tensor((4,), T.float32)):
    B[0] = 1.0
"""
    _, diags = parse(src)
    codes = sorted(c for c, _ in errors(diags))
    assert codes == ["invalid-kernel", "invalid-kernel"]
    msgs = " ".join(d.message for d in diags)
    assert "needs a type" in msgs and "with T.Kernel" in msgs


def test_unicode_columns_are_code_points():
    src = 'import tilelang.language as T\n\n@T.prim_func\ndef k(A: T.Tensor((4,), T.float32)):\n' \
          '    with T.Kernel(1) as bx:\n        s = "é"; T.copy(A, Bé)\n'
    _, diags = parse(src, header=False)
    (d,) = [d for d in diags if d.code == "undefined-name"]
    assert (d.span.line, d.span.col, d.span.end_col) == (6, 27, 29)


def test_diagnostics_carry_instance_labels_and_dedupe():
    src = """
@tilelang.jit
def f(n):
    @T.prim_func
    def k(A: T.Tensor((n,), T.float32)):
        with T.Kernel(1) as bx:
            T.copy(A, missing)
    return k

a = f(4)
b = f(8)
"""
    kernels, diags = parse(src)
    assert len(kernels) == 2
    (d,) = diags
    assert d.code == "undefined-name" and d.instance == "f(n=4)"


def test_quick_fixes_for_close_matches():
    src = """
@T.prim_func
def k(A: T.Tensor((64,), T.flaot16)):
    with T.Kernel(1) as bx:
        S = T.alloc_shard((64,), "float16")
        R = T.alloc_shared((64,), "flaot32")
        T.copy(A, R)
        T.copy(Rr, A)
"""
    _, diags = parse(src)
    fixes = {d.code: d.fix for d in diags}
    assert set(fixes) == {"invalid-dtype", "unknown-builtin", "undefined-name"}
    edits = sorted((d.code, d.fix.edits[0].new_text) for d in diags)
    assert edits == [("invalid-dtype", '"float32"'), ("invalid-dtype", "T.float16"),
                     ("undefined-name", "R"), ("unknown-builtin", "T.alloc_shared")]
    for d in diags:
        assert d.fix.edits[0].span == d.span


def test_augmented_store_to_a_non_buffer_is_reported():
    _, _, errs = _one("T[0, 1] += 1")
    assert [d.code for d in errs] == ["unsupported-syntax"] and "not a buffer" in errs[0].message


def test_python_builtins_on_runtime_values():
    src = """
@T.prim_func
def k(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        for i in T.Parallel(64):
            A[i] = abs(A[i]) + float(i) + max(A[i], 0.0)
        for i in T.Parallel(64):
            A[i] = round(A[i])
"""
    kernels, diags = parse(src)
    assert errors(diags) == [("bad-arguments", line_of(src, "round("))]
    assert "T.*" in diags[0].message
    from tilelang_core.ir.printer import expr_str

    first = [s for s in nodes(kernels[0], N.Store)][0]
    assert expr_str(first.value) == "T.abs(A[i]) + T.cast(i, 'float32') + T.max(A[i], 0.0)"


def test_misspelt_keyword_gets_a_rename_fix_and_no_cascade():
    src = """
@T.prim_func
def k(A: T.Tensor((64, 64), T.float16)):
    with T.Kernal(1) as bx:
        pass

@T.prim_func
def k2(A: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1) as bx:
        T.gemm(A, A, C, transpose_b=True)
"""
    _, diags = parse(src)
    assert errors(diags) == [("unknown-builtin", line_of(src, "T.Kernal")), ("bad-arguments", line_of(src, "T.gemm"))]
    d = diags[1]
    assert "did you mean 'transpose_B'" in d.message
    (edit,) = d.fix.edits
    assert edit.new_text == "transpose_B" and (edit.span.col, edit.span.end_col) == (24, 35) == (d.span.col, d.span.end_col)


def test_use_before_assignment_points_at_the_assignment():
    src = """
@T.prim_func
def k(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        T.copy(A, S)
        S = T.alloc_shared((64,), T.float32)
"""
    _, diags = parse(src)
    (d,) = diags
    assert d.code == "undefined-name" and "used before it is assigned" in d.message
    assert d.related[0].span.line == line_of(src, "S = T.alloc_shared")


def test_float_shapes_are_reported():
    _, _, errs = _one("X = T.alloc_shared((64 / 2, 64), T.float16)")
    assert [d.code for d in errs] == ["bad-arguments"]
    assert "32.0" in errs[0].message and "//" in errs[0].message


def test_float_extents_are_reported():
    src = """
@T.prim_func
def k(A: T.Tensor((64,), T.float32)):
    with T.Kernel(64 / 32) as bx:
        pass

@T.prim_func
def k2(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        for i in T.Parallel(64 / 2):
            A[i] = 0.0
"""
    _, diags = parse(src)
    assert errors(diags) == [("invalid-kernel", line_of(src, "64 / 32")), ("bad-arguments", line_of(src, "64 / 2"))]
    assert all("//" in d.message for d in diags)


def test_ieee_rounding_mode_is_checked_when_called_outside_a_kernel():
    """TileLang's T.ieee_* check the mode when called, before anything else."""
    import tilelang_core.language as T

    with pytest.raises(ValueError, match="Invalid rounding mode 'xy'"):
        T.ieee_mul(1.0, 2.0, "xy")
    with pytest.raises(RuntimeError, match="inside a @T.prim_func"):
        T.ieee_mul(1.0, 2.0, "rz")
