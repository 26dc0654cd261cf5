"""Runtime `while` loops and `break`/`continue` in kernels: IR shape, spans and the constructs still refused."""
from __future__ import annotations

from fe_helpers import errors, line_of, nodes, parse

from tilelang_core.ir import nodes as N
from tilelang_core.ir.printer import stmt_str

SRC = """
@T.prim_func
def k(A: T.Tensor((8, 16), T.float32), B: T.Tensor((8, 16), T.float32)):
    with T.Kernel(8, threads=32) as bx:
        j = T.alloc_var(T.int32)
        j = 0
        while j < 16:
            if A[bx, j] < 0:
                j += 1
                continue
            B[bx, j] = A[bx, j]
            if A[bx, j] > 100:
                break
            j += 1
"""


def test_while_break_continue_ir_and_spans():
    kernels, diags = parse(SRC)
    assert errors(diags) == []
    (w,) = nodes(kernels[0], N.While)
    assert w.span.line == line_of(SRC, "while j") and w.span.col == 8
    assert isinstance(w.cond, N.Compare) and w.cond.op == "<"
    (b,), (c,) = nodes(kernels[0], N.Break), nodes(kernels[0], N.Continue)
    assert (b.span.line, b.span.col, b.span.end_col) == (line_of(SRC, "break"), 16, 21)
    assert c.span.line == line_of(SRC, "continue")
    text = stmt_str(kernels[0].body)
    assert "while j < 16:" in text and "break" in text and "continue" in text


def test_trace_time_conditions():
    src = SRC.replace("while j < 16:", "while False:")
    kernels, diags = parse(src)
    assert errors(diags) == [] and nodes(kernels[0], N.While) == []
    kernels, diags = parse(SRC.replace("while j < 16:", "while True:"))
    (w,) = nodes(kernels[0], N.While)
    assert errors(diags) == [] and isinstance(w.cond, N.Const) and w.cond.value is True


def test_break_in_serial_for_ok_but_not_in_parallel():
    src = """
    @T.prim_func
    def k(A: T.Tensor((16,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(16):
                if A[i] < 0:
                    break
                A[i] = 0.0
            for i in T.Parallel(16):
                if A[i] < 0:
                    continue
    """
    kernels, diags = parse(src)
    errs = [d for d in diags if d.is_error]
    assert errors(diags) == [("unsupported-syntax", line_of(src, "continue"))]
    assert "parallel loop" in errs[0].message and "T.serial" in errs[0].message
    assert len(nodes(kernels[0], N.Break)) == 1


def test_break_in_unrolled_python_loop_and_else_clauses():
    src = """
    @T.prim_func
    def k(A: T.Tensor((16,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in (0, 1):
                break
            for i in T.serial(4):
                A[i] = 0.0
            else:
                A[0] = 1.0
    """
    _, diags = parse(src)
    errs = [d for d in diags if d.is_error]
    assert errors(diags) == [("unsupported-syntax", line_of(src, "break")),
                             ("unsupported-syntax", line_of(src, "for i in T.serial"))]
    assert "unrolled" in errs[0].message and "for ... else" in errs[1].message


def test_printed_while_kernel_parses_back_to_the_same_text():
    from tilelang_core.ir.printer import print_func

    kernels, _ = parse(SRC)
    first = print_func(kernels[0])
    again, diags = parse(first)
    assert errors(diags) == [] and print_func(again[0]).splitlines() == first.splitlines()


def test_loop_break_call_is_break():
    src = """
    @T.prim_func
    def k(A: T.Tensor((16,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(16):
                if A[i] < 0:
                    T.loop_break()
            T.loop_break()
    """
    kernels, diags = parse(src)
    errs = [d for d in diags if d.is_error]
    last = len(("import tilelang\nimport tilelang.language as T\n\n" + src.strip("\n")).splitlines())
    assert errors(diags) == [("unsupported-syntax", last)]
    assert "`T.loop_break()` outside a loop" in errs[0].message
    assert len(nodes(kernels[0], N.Break)) == 1


def test_condition_name_rebound_in_the_body_must_be_an_alloc_var():
    src = SRC.replace("        j = T.alloc_var(T.int32)\n", "")
    _, diags = parse(src)
    errs = [d for d in diags if d.is_error]
    assert errors(diags)[0] == ("unsupported-syntax", line_of(src, "    j += 1"))
    assert "T.alloc_var" in errs[0].message
