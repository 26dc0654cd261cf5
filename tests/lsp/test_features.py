"""Feature functions as pure functions over hand-built CheckResults (hover uses `<CURSOR>` markers)."""
from __future__ import annotations

from tilelang_core.diagnostics import Diagnostic, Fix, Severity, TextEdit
from tilelang_core.source import Span
from tilelsp.features import actions, codelens, completion, hover, inlay

from lsp_fakes import GEMM, cursor, gemm_result


def hover_at(marked: str, lowered=()):
    text, line, col = cursor(marked)
    found = hover.hover(gemm_result(text), line, col, lowered=lowered, uri="file:///tmp/gemm.py")
    return found[0] if found else None


def test_hover_buffer_declaration_and_use():
    decl = hover_at(GEMM.replace("A_shared = ", "A_sh<CURSOR>ared = "))
    assert "shared.dyn" in decl and "128×32" in decl and "float16" in decl and "8 KiB" in decl
    use = hover_at(GEMM.replace("T.gemm(A_shared", "T.gemm(A_<CURSOR>shared"))
    assert "A_shared" in use and "128×32" in use


def test_hover_buffer_shows_layout_after_lowering():
    lowered = [{"kernel": "main", "target": "sm_90a", "layouts": {"C_local": "Fragment(thread=..., swizzle=none)"}}]
    text = hover_at(GEMM.replace("T.clear(C_local)", "T.clear(C_lo<CURSOR>cal)"), lowered)
    assert "local.fragment" in text and "Fragment(thread=..., swizzle=none)" in text


def test_hover_kernel_on_def_and_launch():
    on_def = hover_at(GEMM.replace("def main(", "def ma<CURSOR>in("))
    assert "kernel **main**" in on_def and "grid (8, 8) × 100 threads" in on_def
    assert "`A_shared` | 8 KiB | 5 | 40 KiB" in on_def and "sm_90a: 80 KiB of 227 KiB" in on_def
    assert "registers (estimate): 128" in on_def
    on_launch = hover_at(GEMM.replace("with T.Kernel(", "with T.Ker<CURSOR>nel("))
    assert "kernel **main**" in on_launch


def test_hover_kernel_includes_lowered_code_truncated_with_link():
    cuda = "\n".join(f"line {i};" for i in range(100))
    lowered = [{"kernel": "main", "target": "sm_90a", "smem_bytes": 49152, "tir": "# tir\n", "cuda": cuda,
                "launch": {"grid": [8, 8, 1], "block": [128, 1, 1], "dynamic_smem": 49152}}]
    text = hover_at(GEMM.replace("def main(", "def <CURSOR>main("), lowered)
    assert "<details><summary>CUDA</summary>" in text and "line 23;" in text and "line 24;" not in text
    assert "command:tilelsp.showCuda?" in text and "(100 lines)" in text
    assert "48 KiB shared memory allocated" in text and "launch: grid (8, 8, 1), block (128, 1, 1)" in text


def test_hover_kernel_lists_every_launch_of_a_multi_kernel_prim_func():
    kernels = [{"symbol": "main_kernel0_kernel", "grid": [8, 4], "block": [128, 1, 1], "dynamic_smem": 49152},
               {"symbol": "main_kernel1_kernel", "grid": [8], "block": [64, 1, 1], "dynamic_smem": 0}]
    lowered = [{"kernel": "main", "target": "sm_90a", "launch": {
        "grid": [8, 4], "block": [128, 1, 1], "dynamic_smem": 49152, "kernels": kernels,
        "workspaces": [{"name": "partial", "dtype": "float32", "shape": [8, 4]}]}}]
    text = hover_at(GEMM.replace("def main(", "def <CURSOR>main("), lowered)
    assert "launch 1 of 2: grid (8, 4), block (128, 1, 1)" in text
    assert "launch 2 of 2: grid (8,), block (64, 1, 1)" in text
    assert "`partial` float32[8, 4]" in text


def test_hover_builtin_with_alias():
    text, line, col = cursor(GEMM.replace("import tilelang.language as T", "import tilelang.language as TL")
                             .replace("T.clear(C_local)", "TL.cl<CURSOR>ear(C_local)"))
    found = hover.hover(gemm_result(text), line, col)
    assert found and "T.clear(" in found[0]
    assert found[1].end_col - found[1].col == len("TL.clear")


def test_hover_nothing_on_blank_or_plain_python():
    assert hover_at(GEMM.replace("    return main", "    ret<CURSOR>urn main")) is None


def test_inlay_hints_for_allocations_only():
    result = gemm_result()
    hints = inlay.inlay_hints(result)
    labels = {result.source.line_text(h.line).strip().split(" ")[0]: h.label for h in hints}
    assert set(labels) == {"A_shared", "B_shared", "C_local"}
    assert labels["A_shared"].endswith("shared.dyn 128×32 float16 · 8 KiB ×5 stages")
    assert labels["C_local"].endswith("local.fragment 128×128 float32")
    assert all(h.col == len(result.source.line_text(h.line)) for h in hints)
    assert inlay.inlay_hints(result, 1, 5) == []


def test_code_lenses_five_per_kernel():
    lenses = codelens.code_lenses(gemm_result(), "file:///tmp/gemm.py")
    assert [l.command for l in lenses] == ["tilelsp.verify", "tilelsp.showIR", "tilelsp.showCuda", "tilelsp.showLayout",
                                           "tilelsp.benchmark"]
    assert all(l.arguments == ("file:///tmp/gemm.py", "main") for l in lenses)


def test_completion_after_alias_dot():
    text = "import tilelang.language as TL\nx = TL.al"
    items = completion.completions(text, "x = TL.al", len("x = TL.al"))
    names = {i.label for i in items}
    assert {"alloc_shared", "alloc_fragment", "alloc_local"} <= names and all(n.startswith("al") for n in names)
    assert completion.completions(text, "x = np.al", len("x = np.al")) == []
    top = {i.label for i in completion.completions("import tilelang\ntilelang.", "tilelang.", 9)}
    assert "jit" in top


def test_signature_help_active_parameter():
    text = "import tilelang.language as T\nT.copy(A[0, 1], "
    sig = completion.signature_help(text, len(text))
    assert sig.label.startswith("T.copy(src, dst") and sig.params[sig.active][0] == "dst"
    text2 = "import tilelang.language as T\nfor k in T.Pipelined(4, num_stages="
    sig2 = completion.signature_help(text2, len(text2))
    assert sig2.params[sig2.active][0] == "num_stages"
    assert completion.signature_help("print(", 6) is None


def _diag(code, span, **data):
    return Diagnostic(code, Severity.ERROR, "x", span, kernel="main", data=data)


def test_fix_num_stages_edits_only_the_literal():
    result = gemm_result()
    launch = next(i for i, l in enumerate(result.source.lines, 1) if "T.Kernel" in l)
    d = _diag("shared-memory-exceeded", Span(launch, 8, launch, 20), max_stages_that_fit=2)
    acts = actions.code_actions(result, d.span, [d])
    assert acts[0].title.startswith("Lower num_stages to 2")
    fixed = actions.apply_edits(result.source.text, acts[0].edits)
    assert "T.Pipelined(T.ceildiv(K, block_K), num_stages=2):" in fixed
    assert fixed.replace("num_stages=2", "num_stages=5") == result.source.text


def test_fix_threads_rounds_or_clamps():
    result = gemm_result()
    launch = next(i for i, l in enumerate(result.source.lines, 1) if "T.Kernel" in l)
    span = Span(launch, 13, launch, 80)
    rounded = actions.code_actions(result, span, [_diag("threads-not-warp-multiple", span)])
    assert "threads=128)" in actions.apply_edits(result.source.text, rounded[0].edits)
    clamped = actions.code_actions(result, span, [_diag("threads-exceeded", span)])
    assert "threads=1024)" in actions.apply_edits(result.source.text, clamped[0].edits)


def test_analysis_fix_becomes_quickfix_and_kernel_commands():
    result = gemm_result()
    span = Span(9, 12, 9, 40)
    d = Diagnostic("copy-extent-mismatch", Severity.ERROR, "x", span,
                   fix=Fix("Use block_K", (TextEdit(Span(9, 12, 9, 20), "B"),)))
    acts = actions.code_actions(result, span, [d], "file:///g.py", actions.kernel_at(result, 9))
    assert acts[0].title == "Use block_K" and acts[0].kind == actions.QUICKFIX
    assert [a.command for a in acts[1:]] == ["tilelsp.server.verify", "tilelsp.server.benchmark",
                                             "tilelsp.server.autotune", "tilelsp.server.sanitize",
                                             "tilelsp.server.metamorphic"]
    assert acts[1].arguments == ("file:///g.py", "main")
    assert actions.kernel_at(result, 1) is None


def _fix_example(name: str):
    from tilelang_core.check import check_source
    from lsp_fakes import ROOT

    path = ROOT / "examples/errors" / name
    text = path.read_text()
    result = check_source(text, str(path))
    [diag] = [d for d in result.diagnostics if d.is_error]
    return text, path, actions.code_actions(result, diag.span, [diag])


def _recheck(text, path):
    from tilelang_core.check import check_source

    return [d.code for d in check_source(text, str(path)).diagnostics if d.is_error]


def test_gemm_accumulator_fix_clears_the_error():
    text, path, acts = _fix_example("gemm_accumulator_shape.py")
    assert acts[0].title == "Allocate C_local as (block_M, block_N) (and its uses)" and acts[0].preferred
    assert _recheck(actions.apply_edits(text, acts[0].edits), path) == []


def test_gemm_k_mismatch_offers_both_sides():
    text, path, acts = _fix_example("gemm_k_mismatch.py")
    assert [a.title for a in acts] == ["Use K = block_K for B_shared (and its uses)",
                                       "Use K = 64 for A_shared (and its uses)"]
    for a in acts:
        assert _recheck(actions.apply_edits(text, a.edits), path) == []


def test_real_num_stages_and_threads_fixes():
    for name in ("shared_memory_exceeded.py", "threads_exceeded.py"):
        text, path, acts = _fix_example(name)
        assert acts and acts[0].preferred
        assert _recheck(actions.apply_edits(text, acts[0].edits), path) == []


def test_hover_lists_every_instance_of_a_factory():
    from tilelang_core.check import check_source

    text = (GEMM.replace("threads=100", "threads=128") + "\n\nk1 = matmul(1024, 1024, 1024)\n"
            "k2 = matmul(512, 512, 512, block_M=64)\n")
    clean, line, col = cursor(text.replace("A_shared = T", "A_sha<CURSOR>red = T"))
    result = check_source(clean, "/tmp/two.py")
    found = hover.hover(result, line, col)
    assert found and "**other instances**" in found[0]
    assert "64×32" in found[0] and "128×32" in found[0]
    kernel_line = next(i for i, l in enumerate(clean.splitlines(), 1) if "def main(" in l)
    k = hover.hover(result, kernel_line, clean.splitlines()[kernel_line - 1].index("main"))
    assert "block_M=64" in k[0] and "**other instances**" in k[0]


def test_semantic_tokens_scopes_and_builtins():
    from tilelang_core.check import check_source
    from lsp_fakes import ROOT

    from tilelsp.features import semantic

    text = (ROOT / "examples/gemm.py").read_text()
    result = check_source(text, "g.py")
    tokens = semantic.semantic_tokens(result)
    lines = text.splitlines()
    seen = {(lines[t.line - 1][t.col:t.col + t.length], t.type, t.modifiers) for t in tokens}
    assert ("T.alloc_shared", "function", ("defaultLibrary",)) in seen
    assert ("A_shared", "variable", ("declaration", "shared")) in seen
    assert ("C_local", "variable", ("fragment",)) in seen
    data = semantic.encode(tokens, lines, lambda s, c: c)
    assert len(data) == 5 * len(tokens) and all(v >= 0 for v in data)


def test_features_never_raise_anywhere_in_examples():
    """Hover, completion and signature help at (every 4th column of) every line of a few example files,
    including one with a syntax error, return a value or None and never raise."""
    from tilelang_core.check import check_source
    from lsp_fakes import ROOT

    for name in ("gemm.py", "errors/syntax_error.py", "errors/gemm_k_mismatch.py"):
        text = (ROOT / "examples" / name).read_text()
        result = check_source(text, name)
        for line, line_text in enumerate(result.source.lines, 1):
            for col in range(0, len(line_text) + 1, 4):
                hover.hover(result, line, col)
                completion.completions(text, line_text, col)
                completion.signature_help(text, result.source.offset(line, col))
        assert inlay.inlay_hints(result) is not None


def _lowered_with_line_map():
    """A lowering entry as the worker sends it: the CUDA text and its line map (T.gemm on GEMM's line 16)."""
    gemm_line = GEMM.splitlines().index(next(ln for ln in GEMM.splitlines() if "T.gemm(" in ln)) + 1
    cuda = "\n".join(["// header", "#include <cuda_fp16.h>", 'extern "C" __global__ void main_kernel(half* A) {',
                      "  // tilelang source line %d" % gemm_line, "  tl::gemm_ss<128, 128, 32>(A, B, C);", "}"])
    note = {"line": gemm_line, "col": 16, "end_line": gemm_line, "end_col": 51, "m": 128, "n": 128, "k": 32,
            "dtypes": ["float16", "float16", "float32"], "instruction": "mma.sync m16n8k16 (operands by ldmatrix)",
            "warps": "2x2 warps (M x N), each 64x64", "threads": 128,
            "swizzle": {"A": "A_shared: 16-byte chunks XOR-swizzled", "B": "B_shared: 16-byte chunks XOR-swizzled"}}
    return [{"kernel": "main", "target": "sm_80", "cuda": cuda, "line_map": [[gemm_line, [4, 5]]], "gemms": [note],
             "layout_images": {"C_local": "data:image/svg+xml;base64,PHN2Zy8+"},
             "swizzles": {"A_shared": "16-byte chunks XOR-swizzled within each row: chunk ^= (row >> 1) & 3"}}]


def test_hover_statement_shows_its_cuda_lines_not_the_file_header():
    lowered = _lowered_with_line_map()
    on_gemm = hover_at(GEMM.replace("T.gemm(A_shared", "T.ge<CURSOR>mm(A_shared"), lowered)
    assert "CUDA for line" in on_gemm and "tl::gemm_ss<128, 128, 32>(A, B, C);" in on_gemm
    assert "#include" not in on_gemm and "// header" not in on_gemm
    # on T.gemm: this call's M/N/K, dtypes, instruction, warps and swizzles
    assert "M=128 N=128 K=32" in on_gemm and "`mma.sync m16n8k16" in on_gemm and "2x2 warps" in on_gemm
    assert "XOR-swizzled" in on_gemm
    kernel = hover_at(GEMM.replace("def main(", "def <CURSOR>main("), lowered)
    assert "extern \"C\" __global__" in kernel and "#include" not in kernel  # the kernel's code, not the header


def test_hover_factory_def_and_layout_picture():
    factory = hover_at(GEMM.replace("def matmul(", "def mat<CURSOR>mul("))
    assert factory.startswith("kernel factory **matmul** → `main`") and "grid (8, 8)" in factory
    text, line, col = cursor(GEMM.replace("T.clear(C_local)", "T.clear(C_lo<CURSOR>cal)"))
    lowered = _lowered_with_line_map()
    with_image = hover.hover(gemm_result(text), line, col, lowered=lowered, uri="file:///g.py", images=True)[0]
    assert "![layout of C_local](data:image/svg+xml;base64," in with_image and "tilelsp.showLayout" in with_image
    without = hover.hover(gemm_result(text), line, col, lowered=lowered, uri="file:///g.py")[0]
    assert "data:image" not in without
    shared = hover_at(GEMM.replace("A_shared = ", "A_sh<CURSOR>ared = "), lowered)
    assert "swizzle: 16-byte chunks XOR-swizzled within each row: chunk ^= (row >> 1) & 3" in shared
