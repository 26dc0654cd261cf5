"""Which test functions of the real TileLang's suite count, by rule, read statically from each test file.

A test function counts unless its subject is one of the rules below. The subject is read from the source of the
test function and of the module-level functions it calls (transitively, within its file), so a test whose helper
compares generated CUDA text is left out like one that does it inline. Each rule has a name reported with the test.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

COUNTED_FOLDERS = ("language", "kernel", "jit", "cpu", "math", "fastmath", "autotune", "profiler", "layout",
                   "debug", "components")

# (rule name, regular expression over the subject's source); the first match wins.
RULES: tuple[tuple[str, re.Pattern], ...] = tuple((name, re.compile(pattern)) for name, pattern in (
    ("sm100-or-newer", r"requires_cuda_compute_version(_ge)?\(\s*1\d|sm_1\d\d|tcgen05|TCGEN5|\bblackwell\b|"
                       r"compute_version_eq\(\s*1\d|T\.alloc_tmem|tmem_|(?i:sm_?1[0-2]\d)"),  # SM120 block-scaled MMA too
    ("amd-metal-webgpu", r"requires_rocm|requires_metal|requires_cdna|requires_gfx950|\bhip\b|target=\"(hip|metal|"
                         r"webgpu)|\"metal\"|\"webgpu\"|\bmfma\b|\bwmma_amd\b|rocm"),
    ("cutedsl-backend", r"cutedsl|CuTeDSL|cute_dsl"),
    ("tilelang-internals", r"tilelang\.transform(?!\s+import\s+(PassConfigKey|simplify_prim_func)\b|\.(PassConfigKey|simplify_prim_func)\b)|"
                           r"tl\.transform|"
                           r"tilelang\.instrumentation|pass_timing|pass_diff|pass_visualizer|pass_events|lower_trace|"
                           r"tilelang\.engine|jit\.adapter|_ffi_api|"
                           r"tilelang\.cache|KernelCache|\.lower_intrinsic|tilelang\.layout\.\w+\._|"
                           r"tilelang\.utils\.target|tilelang\.analysis|tilelang\.ir\b|"
                           r"tilelang\.language\.common|language\.tir\.exports|language\.eager\.ast|_normalize_threads|"
                           r"grouped_compile|get_exportable_executable|"
                           r"__tilelang_dialect__|\.__module__\s*==\s*[\"']tilelang\.|from_database"),
    ("tvm-internals", r"tvm\.ir\.|tvm\.IRModule|tvm\.tir\.transform|tvm\.tirx\.transform|tvm\.transform\.|"
                      r"tvm\.arith|tvm\.script|tvm\.s_tir|structural_equal|stmt_functor|tvm\.runtime\.|"
                      r"tvm\.get_global_func|tvm_ffi|tvm\.target\.Target\(\s*\"llvm|\.script\(\)"),
    ("generated-code-text", r"assert\s+[^\n]*\bin\s+(src|source|code|kernel_source|cuda_source|ptx|llvm_ir|"
                            r"kernel_code|mod_source|source_code|generated)\b|get_kernel_source\(\)\s*\n?[^\n]*\.count\(|"
                            r"\.count\(\s*['\"]|assert\s*\(?\s*f?['\"][^'\"\n]+['\"]\s+(not\s+)?in\s+[\w.]*(src|source|code|asm|ptx|ir)\w*|"
                            r"\b(src|source|code)\.splitlines\(\)|"
                            r"\bin\s+[\w.]+\.get_kernel_source\(|re\.(findall|search|match|finditer)\([^\n]*(src|source|code)"),
))


def _functions(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level functions, classes and imported names by name (and methods of test classes by 'Class.name')."""
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{sub.name}"] = sub
    return out


def _code_only(segment: str) -> str:
    """The segment without its comments (a comment naming hip is not a test about AMD)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(segment).readline) if t.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return segment


def _subject(node: ast.AST, defs: dict[str, ast.AST], text: str) -> str:
    """The source of `node` and of every module-level function it reaches by name, transitively."""
    seen: set[str] = set()
    parts: list[str] = []
    todo = [node]
    while todo:
        cur = todo.pop()
        parts.append(_code_only(ast.get_source_segment(text, cur) or ""))
        parts += [ast.get_source_segment(text, d) or "" for d in getattr(cur, "decorator_list", [])]
        for sub in ast.walk(cur):
            if isinstance(sub, ast.Name) and sub.id in defs and sub.id not in seen:
                seen.add(sub.id)
                todo.append(defs[sub.id])
    return "\n".join(parts)


def classify_file(path: Path) -> dict[str, str | None]:
    """Each test function of the file -> the rule that leaves it out, or None when it counts."""
    text = path.read_text(encoding="utf-8", errors="replace")
    tree = ast.parse(text)
    defs = _functions(tree)
    header = "\n".join(ast.get_source_segment(text, n) or "" for n in tree.body
                       if isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign, ast.Expr)))
    out: dict[str, str | None] = {}
    for name, node in defs.items():
        if not name.split(".")[-1].startswith("test") or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        subject = _subject(node, defs, text)
        out[name.replace(".", "::")] = next((rule for rule, rx in RULES if rx.search(subject)), None)
    if re.search(r"pytestmark\s*=.*(rocm|metal|hip)", header):
        out = {k: v or "amd-metal-webgpu" for k, v in out.items()}
    return out


def function_of(nodeid: str) -> str:
    """'path::Class::test_x[param]' -> 'Class::test_x' (the key classify_file uses)."""
    parts = nodeid.split("::")[1:]
    return "::".join(parts).split("[")[0]
