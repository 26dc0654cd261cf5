"""Code actions: quick fixes built from libcst positions (only the literal changes, formatting kept).

Fixes: lower `num_stages` to the largest value that fits, clamp or round `threads`, and any
machine-applicable `Diagnostic.fix` the analysis attached (e.g. a mismatched tile dim). Plus
"Verify on device" / "Benchmark" commands for the kernel under the cursor.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tilelang_core.diagnostics import Diagnostic, TextEdit
from tilelang_core.source import Span

QUICKFIX, SOURCE = "quickfix", "source"


@dataclass(frozen=True)
class Action:
    """One code action: edits (a quick fix) or a server command."""

    title: str
    kind: str
    edits: tuple[TextEdit, ...] = ()
    diagnostic: Diagnostic | None = None
    command: str | None = None
    arguments: tuple = ()
    preferred: bool = False
    data: dict = field(default_factory=dict)


def _overlaps(a: Span, b: Span) -> bool:
    return (a.line, a.col) <= (b.end_line, b.end_col) and (b.line, b.col) <= (a.end_line, a.end_col)


def _keyword_literals(text: str, keyword: str) -> list[tuple[Span, int, Span]]:
    """(span of the integer literal, its value, span of the call) for every `f(..., keyword=<int>)`.

    When the keyword's value is a name (`num_stages=num_stages`), the literal is the integer default of
    that parameter in an enclosing def (the factory), so the fix edits where the value comes from.
    """
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except Exception:
        return []
    positions = wrapper.resolve(PositionProvider)

    def span(node) -> Span:
        r = positions[node]
        return Span(r.start.line, r.start.column, r.end.line, r.end.column)

    out, scopes = [], []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            scopes.append({p.name.value: p.default for p in node.params.params + node.params.kwonly_params})

        def leave_FunctionDef(self, node):
            scopes.pop()

        def visit_Call(self, node):
            for arg in node.args:
                if arg.keyword is None or arg.keyword.value != keyword:
                    continue
                value = arg.value
                if isinstance(value, cst.Name):
                    value = next((sc[value.value] for sc in reversed(scopes) if value.value in sc), None)
                if isinstance(value, cst.Integer):
                    out.append((span(value), int(value.value, 0), span(node)))

    wrapper.visit(Finder())
    return out


def _kernel_region(result, diag: Diagnostic) -> Span | None:
    """The source region of the kernel a diagnostic belongs to (def line to the last line of its body)."""
    spans = [k.span for k in getattr(result, "kernels", None) or ()
             if getattr(k, "span", None) and (k.name == diag.kernel or k.span.covers(diag.span))]
    if not spans:
        return None
    def_span = min(spans, key=lambda s: s.size())
    body = [getattr(k.body, "span", None) for k in result.kernels if getattr(k, "span", None) == def_span]
    end = max([def_span] + [b for b in body if b], key=lambda s: (s.end_line, s.end_col))
    return Span(def_span.line, def_span.col, end.end_line, end.end_col)


def _candidates(result, diag: Diagnostic, keyword: str):
    found = _keyword_literals(result.source.text, keyword)
    near = [f for f in found if any(_overlaps(s, f[2]) for s in (diag.span, *(r.span for r in diag.related)))]
    if near:
        return near
    region = _kernel_region(result, diag)
    return [f for f in found if region is not None and _overlaps(region, f[2])]


def fix_num_stages(result, diag: Diagnostic) -> Action | None:
    """Lower every too-large `num_stages=` of the kernel to `data['max_stages_that_fit']`."""
    fit = diag.data.get("max_stages_that_fit")
    if not isinstance(fit, int) or fit < 1:
        return None
    edits = tuple(TextEdit(lit, str(fit)) for lit, value, _call in _candidates(result, diag, "num_stages") if value > fit)
    if not edits:
        return None
    return Action(f"Lower num_stages to {fit} (fits the shared-memory budget)", QUICKFIX, edits, diag, preferred=True)


def _round_threads(n: int) -> int:
    return min(1024, max(32, (n + 31) // 32 * 32))


def fix_threads(result, diag: Diagnostic) -> Action | None:
    """Clamp `threads=` to 1024, or round it up to a multiple of 32."""
    edits = []
    for lit, value, _call in _candidates(result, diag, "threads"):
        new = 1024 if diag.code == "threads-exceeded" else _round_threads(value)
        if new != value:
            edits.append(TextEdit(lit, str(new)))
    if not edits:
        return None
    new_text = edits[0].new_text
    return Action(f"Set threads={new_text}", QUICKFIX, tuple(edits), diag, preferred=True)


def from_fix(diag: Diagnostic) -> Action | None:
    """The analysis' own machine-applicable fix as a code action."""
    if diag.fix is None or not diag.fix.edits:
        return None
    return Action(diag.fix.title, QUICKFIX, tuple(diag.fix.edits), diag, preferred=True)


def _parse_calls(text: str):
    """(module, {(line, col) of a call's start: call}, span_of) for the text, or None when it does not parse."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except Exception:
        return None
    positions = wrapper.resolve(PositionProvider)

    def span_of(node) -> Span:
        r = positions[node]
        return Span(r.start.line, r.start.column, r.end.line, r.end.column)

    calls = {}
    for node, r in positions.items():
        if isinstance(node, cst.Call):
            calls.setdefault((r.start.line, r.start.column), node)
    return wrapper.module, calls, span_of


def _arg(call, index: int, name: str):
    named = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    positional = [a.value for a in call.args if a.keyword is None]
    return named if named is not None else (positional[index] if index < len(positional) else None)


def _gemm_operands(result, diag: Diagnostic):
    """The gemm call's A, B, C allocation shapes as lists of (code, span) plus the transpose flags."""
    import libcst as cst

    parsed = _parse_calls(result.source.text)
    if parsed is None:
        return None
    module, calls, span_of = parsed
    gemm = calls.get((diag.span.line, diag.span.col))
    allocs = {}
    for r in diag.related:
        call = calls.get((r.span.line, r.span.col))
        shape = _arg(call, 0, "shape") if call is not None else None
        if isinstance(shape, (cst.Tuple, cst.List)):
            allocs[r.message.split(" ")[0]] = [(module.code_for_node(e.value), span_of(e.value)) for e in shape.elements]
    if gemm is None:
        return None
    names = [module.code_for_node(v) if v is not None else None for v in (_arg(gemm, i, n) for i, n in enumerate("ABC"))]
    flags = [module.code_for_node(v) == "True" if v is not None else False
             for v in (_arg(gemm, 3, "transpose_A"), _arg(gemm, 4, "transpose_B"))]
    if any(n not in allocs or len(allocs[n]) != 2 for n in names):
        return None
    return [allocs[n] for n in names], names, flags


def fix_gemm_shapes(result, diag: Diagnostic) -> list[Action]:
    """Accumulator: allocate C as (M of A, N of B). K mismatch: one action per side (make it the other's K).
    Each changes the tile's dependent uses too (copy offsets, loop extents) or is not offered."""
    found = _gemm_operands(result, diag)
    if found is None:
        return []
    (a, b, c), (na, nb, nc), (ta, tb) = found
    m, n = a[1 if ta else 0], b[0 if tb else 1]
    if diag.code == "gemm-accumulator-shape":
        changes = [(old, new[0]) for old, new in zip(c, (m, n)) if old[0] != new[0]]
        action = _consistent(result, diag, f"Allocate {nc} as ({m[0]}, {n[0]})", changes, preferred=True)
        return [action] if action else []
    ka, kb = a[0 if ta else 1], b[1 if tb else 0]
    if ka[0] == kb[0]:
        return []
    found = [_consistent(result, diag, f"Use K = {ka[0]} for {nb}", [(kb, ka[0])]),
             _consistent(result, diag, f"Use K = {kb[0]} for {na}", [(ka, kb[0])])]
    return [a for a in found if a is not None]


def _consistent(result, diag: Diagnostic, title: str, changes, preferred: bool = False) -> Action | None:
    """An action that changes each tile dim (text, span) to a new text together with every other use of the old
    text in the kernel as a step or extent (`k * 64`, `T.ceildiv(K, 64)`); None when the old text is used any
    other way (it may mean something else there) or when the checks still reject the result."""
    region = _kernel_region(result, diag)
    if region is None or not changes:
        return None
    edits, indices = [], _index_names(result.source, region)
    for (old, span), new in changes:
        uses = _token_uses(result.source.text, old, region)
        if any(u != span and not _is_step_or_extent(result.source.line_text(u.line), u, indices) for u in uses):
            return None
        edits += [TextEdit(u, new) for u in uses if u != span] + [TextEdit(span, new)]
    if len({e.span for e in edits}) != len(edits):
        return None
    action = Action(title + (" (and its uses)" if len(edits) > len(changes) else ""), QUICKFIX, tuple(edits), diag,
                    preferred=preferred)
    return action if _accepted(result, diag, action) else None


def _token_uses(text: str, token: str, region: Span) -> list[Span]:
    """Spans of a name or number token (or a sequence of tokens) inside a region, comments and strings excluded."""
    import tokenize

    want = [t.string for t in _tokens(token)]
    toks = [t for t in _tokens(text) if region.line <= t.start[0] <= region.end_line]
    out = []
    for i in range(len(toks) - len(want) + 1):
        run = toks[i:i + len(want)]
        if [t.string for t in run] == want and run[0].type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP):
            out.append(Span(run[0].start[0], run[0].start[1], run[-1].end[0], run[-1].end[1]))
    return out


def _tokens(text: str) -> list:
    import io
    import tokenize

    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]
    except (tokenize.TokenError, SyntaxError):
        return []


def _index_names(source, region: Span) -> set[str]:
    """Loop variables and block indices bound in a kernel region (`for k in ...`, `as (bx, by)`)."""
    import re

    names: set[str] = set()
    for n in range(region.line, region.end_line + 1):
        for m in re.finditer(r"\bfor\s+([\w\s,()]+?)\s+in\b|\bas\s+\(?([\w\s,]+)\)?\s*:", source.line_text(n)):
            names.update(re.findall(r"\w+", m.group(1) or m.group(2)))
    return names


def _is_step_or_extent(line: str, span: Span, indices: set[str]) -> bool:
    """True for `k * old` / `old * k` with k a loop variable or block index, or `T.ceildiv(..., old)`: the uses
    that follow a tile dim."""
    import re

    before, after = line[:span.col].rstrip(), line[span.end_col:].lstrip() if span.line == span.end_line else ""
    left, right = re.search(r"(\w+)\s*\*$", before), re.match(r"\*\s*(\w+)", after)
    return (left is not None and left.group(1) in indices and not before.endswith("**")) \
        or (right is not None and right.group(1) in indices and not after.startswith("**")) \
        or (re.search(r"ceildiv\([^()]*,$", before) is not None and after.startswith(")"))


def _accepted(result, diag: Diagnostic, action: Action) -> bool:
    """The fixed text no longer has the diagnostic's error and has no error the original did not have."""
    from tilelang_core.check import check_source

    fixed = check_source(apply_edits(result.source.text, action.edits), result.source.path, result.targets)
    before = {d.code for d in result.diagnostics if d.is_error} - {diag.code}
    return {d.code for d in fixed.diagnostics if d.is_error} <= before


_FIXERS = {"shared-memory-exceeded": fix_num_stages, "threads-exceeded": fix_threads,
           "threads-not-warp-multiple": fix_threads}
_MULTI_FIXERS = {"gemm-accumulator-shape": fix_gemm_shapes, "gemm-shape-mismatch": fix_gemm_shapes}


def code_actions(result, span: Span, diagnostics=None, uri: str = "", kernel_at=None) -> list[Action]:
    """Quick fixes for our diagnostics overlapping `span`, then Verify/Benchmark for the kernel there."""
    diagnostics = result.diagnostics if diagnostics is None else diagnostics
    actions = []
    for d in diagnostics:
        if not _overlaps(d.span, span):
            continue
        found = [from_fix(d) or (_FIXERS[d.code](result, d) if d.code in _FIXERS else None)]
        found += _MULTI_FIXERS[d.code](result, d) if d.code in _MULTI_FIXERS else []
        actions.extend(a for a in found if a and all(a.edits != b.edits for b in actions))
    if kernel_at:
        actions.append(Action(f"Verify {kernel_at} on device", SOURCE, command="tilelsp.server.verify",
                              arguments=(uri, kernel_at)))
        actions.append(Action(f"Benchmark {kernel_at}", SOURCE, command="tilelsp.server.benchmark",
                              arguments=(uri, kernel_at)))
        actions.append(Action(f"Autotune {kernel_at}", SOURCE, command="tilelsp.server.autotune",
                              arguments=(uri, kernel_at)))
        actions.append(Action(f"Sanitize {kernel_at} on the CPU (uninitialised reads, unwritten outputs, races, "
                              "out-of-bounds, K-loop steps, in-place hazards, int32 overflow)", SOURCE,
                              command="tilelsp.server.sanitize", arguments=(uri, kernel_at)))
        actions.append(Action(f"Check that {kernel_at} gives the same result at other tile sizes (on the CPU, no "
                              "reference needed)", SOURCE, command="tilelsp.server.metamorphic",
                              arguments=(uri, kernel_at)))
    return actions


def with_server_fixes(result) -> list[Diagnostic]:
    """The result's diagnostics, each without a fix of its own given the quick fix the server offers for it (the
    preferred one), so `tilelsp check --format json/sarif/text` show what the editor's light bulb applies."""
    import dataclasses

    from tilelang_core.diagnostics import Fix

    out = []
    for d in result.diagnostics:
        if d.fix is None and (d.code in _FIXERS or d.code in _MULTI_FIXERS):
            found = [_FIXERS[d.code](result, d)] if d.code in _FIXERS else _MULTI_FIXERS[d.code](result, d)
            best = next((a for a in found if a and a.preferred), None) or next((a for a in found if a), None)
            if best is not None:
                d = dataclasses.replace(d, fix=Fix(best.title, best.edits))
        out.append(d)
    return out


def kernel_at(result, line: int) -> str | None:
    """The kernel whose def..body contains a 1-based line (None outside kernels)."""
    for k in getattr(result, "kernels", None) or ():
        body = getattr(getattr(k, "body", None), "span", None)
        start = k.span.line if getattr(k, "span", None) else None
        end = body.end_line if body else (k.span.end_line if start else None)
        if start is not None and start <= line <= end:
            return k.name
    return None


def apply_edits(text: str, edits) -> str:
    """Apply TextEdits (non-overlapping) to text; used by tests and the CLI-free preview."""
    from tilelang_core.source import SourceFile

    src = SourceFile(text)
    out = text
    for e in sorted(edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        a, b = src.offset(e.span.line, e.span.col), src.offset(e.span.end_line, e.span.end_col)
        out = out[:a] + e.new_text + out[b:]
    return out
