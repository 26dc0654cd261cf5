"""The kernel-body parser: a whitelist `ast.NodeVisitor` (one `visit_<Node>` per supported statement)
that turns one `@T.prim_func` instance into tile IR with spans, reporting every problem it meets and
continuing with the next statement.
"""
from __future__ import annotations

import ast

from ..diagnostics import Fix, Related, TextEdit, internal_message
from ..ir import nodes as N
from .bodies import is_decorated
from .calls import CallsMixin
from .consteval import Env, bind_target, binop, binop_symbol
from .expr_info import expr_dtype
from .exprs import KernelEval
from .kernel_errors import KernelError
from .params import const_dims, eager_annotation
from .scope import Ctx
from .regions import region_alias_error
from .signatures import catalog_available
from .values import ConstDims, UserFunc, is_expr, is_scalar, to_expr
from . import loops

_UNSUPPORTED = {
    "Try": "`try` is not supported in a kernel; check conditions with `if`",
    "TryStar": "`try` is not supported in a kernel",
    "Delete": "`del` is not supported in a kernel; buffers live until the end of the kernel",
    "Global": "`global` is not supported in a kernel; pass values as factory arguments",
    "Nonlocal": "`nonlocal` is not supported in a kernel",
    "Raise": "`raise` is not supported in a kernel; use T.device_assert(cond) or check in the factory",
    "ClassDef": "classes cannot be defined in a kernel; define them at module level",
    "AsyncFunctionDef": "async functions are not supported in a kernel",
    "AsyncFor": "`async for` is not supported in a kernel", "AsyncWith": "`async with` is not supported in a kernel",
    "Match": "`match` is not supported in a kernel; use if/elif",
}


class KernelParser(CallsMixin, ast.NodeVisitor):
    """Parses statements of one kernel instance; `block()` returns IR statements, errors go to the sink."""

    def __init__(self, ctx: Ctx, env: Env):
        self.ctx, self.env = ctx, env
        self.ev = KernelEval(self)
        self.pending: list = []
        self.target_name: str | None = None
        self.launches = 0
        self.launch_seen = False
        self.launch_depth = 0
        self.launch_threads: tuple = ()  # the threads of the T.Kernel being parsed
        self.loops: list[str] = []  # kinds of the enclosing loops, innermost last (for break/continue)
        self.quiet = 0
        self.quiet_errors = 0
        self.returned = False
        self.return_value = None
        self.macro_depth = 0
        self.eager_params: list = []
        self.eager_outputs: list = []
        self.pass_configs: dict = {}  # T.annotate_pass_configs (frontend/func_attrs.py)
        self.compile_flags: list = []  # T.annotate_compile_flags
        self.non_restrict: list = []  # T.annotate_restrict_buffers: names of tensor parameters that may alias
        self.has_catalog = catalog_available()

    # --- plumbing -----------------------------------------------------------------------------------

    def span(self, node):
        """The user's span of an ast node."""
        return self.ctx.span(node)

    def emit(self, stmt) -> None:
        """Append a statement produced while evaluating the current statement."""
        self.pending.append(stmt)

    def report(self, err: KernelError, fallback) -> None:
        """Record a KernelError as a diagnostic (counted, not recorded, inside a plain helper function)."""
        if self.quiet:
            self.quiet_errors += 1
            return
        if err.code is None:  # a use of a name whose definition already failed: reported there
            return
        span = err.span or (self.span(err.node) if err.node is not None else self.span(fallback))
        related = tuple(Related(s, m) for s, m in err.related if s is not None)
        fix = Fix(err.fix[0], (TextEdit(span, err.fix[1]),)) if err.fix else None
        self.ctx.emit(err.code, err.message, span, related=related, fix=fix)

    def block(self, stmts) -> list:
        """Parse statements in order; a failing statement is reported and skipped."""
        out = []
        for s in stmts:
            saved, self.pending = self.pending, []
            try:
                res = self.visit(s) or []
            except KernelError as err:
                self.report(err, s)
                self.poison(s)
                res = []
            except RecursionError:
                self.ctx.emit("unsupported-syntax", "expression nested too deeply", self.span(s))
                res = []
            except Exception as exc:  # noqa: BLE001 - our bug: reported at this statement, the rest still checked
                self.ctx.emit("internal-error", internal_message("while checking this statement", exc), self.span(s))
                self.poison(s)
                res = []
            out.extend(self.pending)
            out.extend(res if isinstance(res, list) else [res])
            self.pending = saved
            if self.returned:
                break
        return out

    def poison(self, stmt) -> None:
        """Mark the names a failed statement would have defined, so their uses are not reported again."""
        from .values import POISON

        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in self.env.values:
                self.env.values[n.id] = POISON

    def seq(self, stmts, node) -> N.Stmt:
        """A list of statements as one IR statement."""
        if len(stmts) == 1:
            return stmts[0]
        return N.SeqStmt(tuple(stmts), self.span(node) if node is not None else None)

    def generic_visit(self, node):
        """Any statement without a visit_ method is unsupported in a kernel."""
        name = type(node).__name__
        msg = _UNSUPPORTED.get(name, f"`{name}` statements are not supported in a kernel")
        raise KernelError("unsupported-syntax", msg, node)

    # --- simple statements ----------------------------------------------------------------------

    def visit_Pass(self, node):
        return []

    def visit_Assert(self, node):
        return []

    def visit_Import(self, node):
        from .bodies import import_bindings

        self.env.values.update(import_bindings(node))
        return []

    visit_ImportFrom = visit_Import

    def visit_Break(self, node):
        self.loop_exit(node, "break")
        return [N.Break(self.span(node))]

    def visit_Continue(self, node):
        self.loop_exit(node, "continue")
        return [N.Continue(self.span(node))]

    def loop_exit(self, node, word: str) -> None:
        """Check that `break`/`continue` sits directly in a runtime serial or T.unroll loop or `while`."""
        if not self.loops:
            raise KernelError("unsupported-syntax", f"`{word}` outside a loop; it must be inside a `while` or "
                              "`for ... in T.serial(...)` loop of the kernel", node)
        kind = self.loops[-1]
        if kind == "unrolled":
            raise KernelError("unsupported-syntax", f"`{word}` in a loop over a Python sequence (unrolled at trace "
                              "time) is not supported; loop with T.serial or guard the body with `if`", node)
        if kind not in ("serial", "while", "unroll"):  # T.unroll: the flags of passes/loop_exits.py stop it
            raise KernelError("unsupported-syntax", f"`{word}` is not supported in a {kind} loop; use "
                              f"`for ... in T.serial(...)` or a `while` loop, or guard the body with `if`", node)

    def visit_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Constant):
            return []  # docstring or a bare literal
        value = self.ev.eval(v)
        if isinstance(value, N.Call) and value.name == "loop_break" and not value.args:
            self.loop_exit(node, "T.loop_break()")  # the call form of `break`
            return [N.Break(self.span(node))]
        if is_expr(value) and isinstance(value, N.Call):
            return [N.Evaluate(value, self.span(node))]
        return []

    def visit_Return(self, node):
        if self.macro_depth:
            self.return_value = self.ev.eval(node.value) if node.value is not None else None
            self.returned = True
            return []
        if node.value is not None and not self.ctx.eager:
            raise KernelError("unsupported-syntax", "a @T.prim_func returns nothing; write results into an output "
                              "tensor (and list it in out_idx)", node)
        if node.value is not None:  # eager: `return C` names a T.empty output; `return helper(A)` inlines the macro
            self.ev.eval(node.value)
        self.returned = True
        return []

    def visit_FunctionDef(self, node):
        if is_decorated(node, ("macro", "inline"), self.env):
            self.env.values[node.name] = UserFunc(node, self.env, True, self.ctx.mapper)
            return []
        if self.quiet:  # a closure built by a plain Python helper (e.g. a converter factory): inlined when called
            self.env.values[node.name] = UserFunc(node, self.env, False, self.ctx.mapper)
            return []
        raise KernelError("unsupported-syntax", f"nested function `{node.name}` in a kernel; decorate it with "
                          "@T.macro to inline it, or define it outside the kernel", node)

    # --- assignment -----------------------------------------------------------------------------------

    def visit_Assign(self, node):
        out = []
        for target in node.targets:
            out += self.assign(target, node.value, node)
        return out

    def visit_AnnAssign(self, node):
        if node.value is None:
            if self.ctx.eager and isinstance(node.target, ast.Name):
                return eager_annotation(self, node)
            return []
        return self.assign(node.target, node.value, node)

    def assign(self, target, value_node, stmt) -> list:
        """`target = value`: a store, an alloc_var write, a let binding or a trace-time Python binding."""
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(target.elts):
                return self.assign_pairs(target.elts, value_node.elts, stmt)
            value = self.ev.eval(value_node)
            if isinstance(value, ConstDims):
                value = const_dims(self, value)
            bind_target(target, value, self.env)
            return []
        return self.assign_value(target, self.eval_for(target, value_node), stmt)

    def eval_for(self, target, value_node):
        """Evaluate the value of an assignment (allocations take the target's name)."""
        self.target_name = target.id if isinstance(target, ast.Name) else None
        # `X = A_shared[:64, :32]`: the name holds the region (an alias, as in TileLang) for later tile-op operands
        saved, self.ev.allow_regions = getattr(self.ev, "allow_regions", False), isinstance(value_node, ast.Subscript)
        try:
            return self.ev.eval(value_node)
        finally:
            self.target_name = None
            self.ev.allow_regions = saved

    def assign_pairs(self, targets, value_nodes, stmt) -> list:
        """`a, b = x, y`: every value is evaluated before any target is written (so swaps work)."""
        out, values = [], []
        writes = any(isinstance(t, ast.Subscript) or isinstance(t, ast.Name) and
                     isinstance(self.env.values.get(t.id), N.Buffer) for t in targets)
        for i, (t, v) in enumerate(zip(targets, value_nodes)):
            value = self.ev.operand(self.eval_for(t, v)) if writes else self.eval_for(t, v)
            if writes and is_expr(value) and not isinstance(value, (N.Const, N.Var)):
                tmp = N.Var(f"{ast.unparse(t).split('[')[0]}_new{i}", expr_dtype(value), "let", self.span(v))
                out.append(N.LetStmt(tmp, value, self.span(v)))
                value = tmp
            values.append(value)
        for t, value in zip(targets, values):
            out += self.assign_value(t, value, stmt)
        return out

    def assign_value(self, target, value, stmt) -> list:
        """Write an evaluated value to one target."""
        if isinstance(target, ast.Subscript):
            base = self.ev.eval(target.value)
            if isinstance(base, (dict, list)):  # trace-time Python container (e.g. a layout map)
                return self.py_store(base, target, value)
            return [self.store(target, self.scalar_value(value, target), stmt)]
        if isinstance(target, (ast.Tuple, ast.List)):
            bind_target(target, value, self.env)
            return []
        if not isinstance(target, ast.Name):
            raise KernelError("unsupported-syntax", f"cannot assign to `{ast.unparse(target)}` in a kernel", target)
        old = self.env.values.get(target.id)
        if isinstance(old, N.Buffer) and old.scope == "local.var" and value is not old:
            return [N.Store(old, (N.Const(0),), self.scalar_value(value, target), self.span(stmt))]
        return self.bind_name(target, value, stmt)

    def scalar_value(self, value, node):
        """An evaluated value that must be a scalar expression."""
        e = to_expr(self.ev.operand(value), self.span(node))
        if e is None:
            what = "nothing (the call returns no value)" if value is None else "not a scalar"
            raise KernelError("bad-arguments", f"the value stored to `{ast.unparse(node)}` is {what}", node)
        return e

    def bind_name(self, target, value, stmt) -> list:
        """Bind a name: IR expressions become LetStmts, everything else a trace-time value."""
        if isinstance(value, ConstDims):
            dims = const_dims(self, value)
            value = dims[0] if len(dims) == 1 else dims
        if isinstance(value, N.Var) and value.kind == "let" and value.name == target.id:
            self.env.values[target.id] = value  # `v = T.int32()` declares v (bound by a later T.let), or `v = v`
            return []
        if is_expr(value) and not isinstance(value, N.Const) and _of_dims(value):
            self.env.values[target.id] = value  # `KH = K`, `OH = (H - K) // S + 1`: an alias, as in Python
            return []
        if is_expr(value) and not isinstance(value, N.Const):
            var = N.Var(target.id, expr_dtype(value), "let", self.span(target))
            self.env.values[target.id] = var
            return [N.LetStmt(var, value, self.span(stmt))]
        self.env.values[target.id] = value.value if isinstance(value, N.Const) else value
        return []

    def py_store(self, container, target: ast.Subscript, value) -> list:
        """`d[key] = value` on a Python dict or list built at trace time."""
        key = self.ev.eval(target.slice)
        try:
            container[key] = value
        except (TypeError, IndexError, KeyError):
            raise KernelError("bad-arguments", f"cannot assign to `{ast.unparse(target)}`", target) from None
        return []

    def store(self, target: ast.Subscript, value, stmt) -> N.Store:
        """`buf[i, j] = value`."""
        base = self.ev.eval(target.value)
        if isinstance(base, N.Region):
            raise region_alias_error(base, target)
        if not isinstance(base, N.Buffer):
            raise KernelError("unsupported-syntax", f"`{ast.unparse(target.value)}` is not a buffer; only buffer "
                              "elements can be assigned with `[...] =`", target)
        load = self.ev.visit_Subscript(target)
        return N.Store(base, load.indices, value, self.span(stmt))

    def visit_AugAssign(self, node):
        op = binop_symbol(node.op)
        if op is None:
            raise KernelError("unsupported-syntax", "`@=` is not supported in a kernel; multiply tiles with T.gemm",
                              node)
        t = node.target
        if isinstance(t, ast.Subscript):
            load = self.ev.visit_Subscript(t)
            if not isinstance(load, N.Load):
                raise KernelError("unsupported-syntax", f"`{ast.unparse(t.value)}` is not a buffer; only buffer "
                                  "elements can be updated with `[...] op=`", t)
            value = to_expr(binop(op, load, self.ev.scalar(node.value)))
            return [N.Store(load.buffer, load.indices, value, self.span(node))]
        if isinstance(t, ast.Name):
            old = self.ev.eval(t)
            new = binop(op, self.ev.operand(old), self.ev.operand(self.ev.eval(node.value)))
            if isinstance(old, N.Buffer) and old.scope == "local.var":
                return [N.Store(old, (N.Const(0),), to_expr(new), self.span(node))]
            return self.bind_name(t, new, node)
        raise KernelError("unsupported-syntax", f"cannot update `{ast.unparse(t)}` in a kernel", t)

    # --- control flow ----------------------------------------------------------------------------

    def visit_If(self, node):
        cond = self.ev.operand(self.ev.eval(node.test))
        if is_scalar(cond) or cond is None or isinstance(cond, (str, tuple, list, dict)):
            return self.block(node.body if cond else node.orelse)  # decided at trace time
        c = to_expr(cond, self.span(node.test))
        if c is None:
            raise KernelError("bad-arguments", f"the condition `{ast.unparse(node.test)}` is not a scalar", node.test)
        then = self.block(node.body)
        other = self.block(node.orelse) if node.orelse else None
        return [N.If(c, self.seq(then, node), self.seq(other, node) if other is not None else None, self.span(node))]

    def visit_For(self, node):
        if node.orelse:
            raise KernelError("unsupported-syntax", "`for ... else` is not supported in a kernel; set a flag with "
                              "T.alloc_var before `break` and test it after the loop", node)
        return loops.parse_for(self, node)

    def visit_While(self, node):
        if node.orelse:
            raise KernelError("unsupported-syntax", "`while ... else` is not supported in a kernel; set a flag with "
                              "T.alloc_var before `break` and test it after the loop", node)
        self.check_while_names(node)
        cond = self.ev.operand(self.ev.eval(node.test))
        if is_scalar(cond) or cond is None or isinstance(cond, (str, tuple, list, dict)):
            if not cond:
                return []  # false at trace time: the loop never runs
            c = N.Const(True, "bool", self.span(node.test))
        else:
            c = to_expr(cond, self.span(node.test))
            if c is None:
                raise KernelError("bad-arguments", f"the condition `{ast.unparse(node.test)}` is not a scalar",
                                  node.test)
        body = self.loop_body(node.body, "while")
        return [N.While(c, self.seq(body, node), self.span(node))]

    def check_while_names(self, node: ast.While) -> None:
        """A name in the condition that the body rebinds must be a T.alloc_var, or the loop never ends."""
        tested = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
        for st in node.body:
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in tested:
                    old = self.env.values.get(n.id)
                    if not (isinstance(old, N.Buffer) and old.scope == "local.var"):
                        raise KernelError("unsupported-syntax", f"`{n.id}` in the condition of this `while` is a fixed "
                                          "value: assigning it in the loop binds a new name and the condition never "
                                          f"changes; declare `{n.id} = T.alloc_var(T.int32)` before the loop", n)

    def loop_body(self, stmts, kind: str) -> list:
        """Parse a loop body with `kind` as the innermost loop (for break/continue)."""
        self.loops.append(kind)
        try:
            return self.block(stmts)
        finally:
            self.loops.pop()

    def visit_With(self, node):
        return loops.parse_with(self, node)

__all__ = ["KernelParser", "KernelError"]


def _of_dims(value) -> bool:
    """True when an expression reads only dims and scalar parameters (fixed for the whole launch) and draws no
    random number (`r = T.rng_rand()` draws once, so it stays a let)."""
    from ..ir.visitor import walk
    from .rng import DRAW_CALLS

    return not any(isinstance(n, N.Load) or isinstance(n, N.Var) and n.kind not in ("symbolic", "param")
                   or isinstance(n, N.Call) and n.name in DRAW_CALLS for n in walk(value))
