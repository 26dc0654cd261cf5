"""The TileLang frontend: source text (static mode) or a captured function (live mode, for the JIT)
to tile-IR `PrimFunc`s with spans, plus every diagnostic found on the way. Pure Python; never
imports or executes the user's file and never imports tvm.
"""
from __future__ import annotations

import ast
import dataclasses
import warnings

from ..diagnostics import DiagnosticSink, internal_message
from ..ir import nodes as N
from ..source import SourceFile, Span
from .bodies import exec_block, module_env
from .consteval import Env, Evaluator
from .discover import KernelSite, declares_params_in_body, discover
from .instances import bind_params, collect, label
from .kernel import KernelInfo, parse_kernel
from .scan import scan
from .scope import Ctx, SourceMapper
from .values import Unknown, from_live

__all__ = ["parse_file", "parse_captured", "discover_kernels"]


def parse_file(source: SourceFile, sink: DiagnosticSink, instances: dict | None = None) -> list[N.PrimFunc]:
    """Every kernel instance of a file as a PrimFunc (static mode); problems go to `sink`."""
    try:
        return _parse_file(source, sink, instances)
    except RecursionError:
        sink.emit("unsupported-syntax", "the file is nested too deeply to analyse; split the deepest expression",
                  Span(1, 0, 1, 0))
    except Exception as exc:  # noqa: BLE001 - bad input must never crash the checker
        sink.emit("internal-error", internal_message("while analysing this file", exc), Span(1, 0, 1, 0))
    return []


def _parse_file(source: SourceFile, sink: DiagnosticSink, instances: dict | None) -> list[N.PrimFunc]:
    tree = _parse(source.text, source.path, SourceMapper(source), sink)
    if tree is None:
        return []
    argparse_defaults: dict = {}
    env = module_env(tree, argparse_defaults)
    scanned = scan(tree)
    sites = discover(tree, env, scanned)
    factories = {s.factory_name: s.factory for s in sites if s.factory is not None}
    def report(message, node):
        """Record an instance-error at an ast node of this file."""
        sink.emit("instance-error", message, SourceMapper(source).span(node))

    found = collect(scanned, source.text, env, factories, instances, argparse_defaults, report)
    mapper = SourceMapper(source)
    out: list[N.PrimFunc] = []
    for site in sites:
        for kwargs in (found.get(site.factory_name) or [{}]) if site.factory is not None else [None]:
            func = _instantiate(site, kwargs, env, mapper, sink, argparse_defaults)
            if func is not None:
                out.append(func)
    return out


def discover_kernels(source: SourceFile) -> list[KernelSite]:
    """The kernel definitions of a file, without parsing their bodies (for outlines and code lenses)."""
    try:
        tree = ast.parse(source.text)
    except (SyntaxError, ValueError):
        return []
    return discover(tree, module_env(tree))


def parse_captured(captured, sink: DiagnosticSink, out_idx=None, factory=None, instance: str = "",
                   eager: bool = False) -> N.PrimFunc | None:
    """Live mode: parse a captured `@T.prim_func` with its real environment; spans are in its file.
    `eager`: the function is an eager-style `@tilelang.jit` kernel (tensors declared in its body)."""
    text = SourceFile(captured.source, captured.filename)
    mapper = SourceMapper(text, captured.first_line - 1, captured.indent)
    tree = _parse(captured.source, captured.filename, mapper, sink)
    if tree is None:
        return None
    fn = next((s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return None
    env = Env({k: from_live(v) for k, v in captured.env.items()})
    ctx = Ctx(mapper, sink, fn.name, instance, eager or declares_params_in_body(fn))
    if isinstance(out_idx, int):  # @jit(out_idx=-1)
        out_idx = (out_idx,)
    info = KernelInfo(factory, instance, tuple(out_idx) if out_idx is not None else None, ())
    return _guarded(lambda: parse_kernel(fn, env, ctx, info), ctx, fn)


def _parse(text: str, path: str, mapper: SourceMapper, sink: DiagnosticSink):
    try:
        with warnings.catch_warnings():  # e.g. SyntaxWarning for `1if x`: not ours to print
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = max((exc.offset or 1) - 1, 0)
        line_text = mapper.source.line_text(line)
        col = min(col, len(line_text))
        end = (exc.end_lineno or line, max((exc.end_offset or col + 2) - 1, col + 1)) if exc.end_lineno else (line, col + 1)
        span = Span(line + mapper.line_offset, col + mapper.col_offset, end[0] + mapper.line_offset,
                    end[1] + mapper.col_offset)
        sink.emit("syntax-error", f"invalid Python syntax: {exc.msg}", span)
    except ValueError as exc:  # e.g. null bytes
        sink.emit("syntax-error", f"the file cannot be parsed: {exc}", Span(1, 0, 1, 1))
    except (MemoryError, RecursionError):  # Python's own parser gives up on very deep nesting
        sink.emit("unsupported-syntax", "the file is nested too deeply for Python's parser; split the deepest "
                  "expression", Span(1 + mapper.line_offset, 0, 1 + mapper.line_offset, 0))
    return None


def _instantiate(site: KernelSite, kwargs, env: Env, mapper, sink, argparse_defaults) -> N.PrimFunc | None:
    """Bind the factory chain for one instance and parse the kernel in the resulting environment."""
    bindings: dict = {}
    first = len(sink.items)
    ctx = Ctx(mapper, sink, site.node.name, "", site.eager)
    chain = list(site.chain) + ([site.node] if site.eager else [])
    for i, fn in enumerate(chain):
        given = (kwargs or {}) if i == 0 else {}
        params = bind_params(fn, Evaluator(env, argparse_defaults), given, unknown=_symbolic)
        if fn is site.node:  # eager: tensor parameters are declared in the body
            params = {k: (Unknown(k) if _is_symbolic(v) else v) for k, v in params.items()}
            params["__tilelsp_consts__"] = {k: v for k, v in given.items() if k not in params}
        if i == 0:
            bindings = dict(params)
            ctx.instance = label(fn.name, fn, kwargs or {}, bindings)
        env = env.child(params)
        if fn is not site.node:
            exec_block(fn.body, env, argparse_defaults, toward=site.node, on_assert=lambda st: _failed_assert(ctx, st))
    inst = ctx.instance
    bound = tuple((k, v) for k, v in bindings.items() if not k.startswith("__"))
    info = KernelInfo(site.factory_name, inst, site.out_idx, bound, site.pass_configs)
    func = _guarded(lambda: parse_kernel(site.node, env, ctx, info), ctx, site.node)
    errors = tuple(d for d in sink.items[first:] if d.is_error)
    return dataclasses.replace(func, errors=errors) if func is not None and errors else func


def _guarded(fn, ctx: Ctx, node):
    """Run a kernel parse; an internal failure becomes an internal-error on the kernel instead of a crash."""
    try:
        return fn()
    except RecursionError:
        ctx.emit("unsupported-syntax", "the kernel is nested too deeply to analyse; split the deepest expression",
                 ctx.span(node))
    except Exception as exc:  # noqa: BLE001 - bad input must never crash the checker
        ctx.emit("internal-error", internal_message(f"while analysing `{node.name}`", exc), ctx.span(node))
    return None


def _failed_assert(ctx: Ctx, stmt: ast.Assert) -> None:
    """A factory `assert` that is false for this instance."""
    ctx.emit("instance-error", f"`assert {ast.unparse(stmt.test)}` fails for {ctx.instance or 'this kernel'}; "
             "fix the arguments (call site or `# tilelsp:` comment) or the assertion", ctx.span(stmt))


def _symbolic(name: str):
    return N.Var(name, "int32", "symbolic")


def _is_symbolic(v) -> bool:
    return isinstance(v, N.Var) and v.kind == "symbolic"
