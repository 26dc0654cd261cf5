"""Lowers `break`/`continue` to flag variables so the backends only see structured loops: a loop that
exits early gets one-element flags, the rest of its body is guarded by them and a `while` also tests them."""
from __future__ import annotations

import dataclasses

from ..ir import nodes as N
from ..ir.visitor import transform, walk

_ZERO, _ONE = N.Const(0), N.Const(1)


def lower_loop_exits(func: N.PrimFunc) -> N.PrimFunc:
    """`func` without Break/Continue nodes (unchanged when it has none)."""
    if not any(isinstance(n, (N.Break, N.Continue)) for n in walk(func.body)):
        return func
    counter = [0]

    def fn(node):
        if isinstance(node, (N.For, N.While)):
            return _loop(node, counter)
        return node

    return dataclasses.replace(func, body=transform(func.body, fn))


def _exits(s) -> set:
    """The kinds of exits ("break"/"continue") in `s` that leave the loop around it (not inner loops)."""
    if isinstance(s, N.Break):
        return {"break"}
    if isinstance(s, N.Continue):
        return {"continue"}
    if isinstance(s, N.SeqStmt):
        return set().union(*(_exits(x) for x in s.stmts)) if s.stmts else set()
    if isinstance(s, N.If):
        return _exits(s.then_body) | (_exits(s.else_body) if s.else_body is not None else set())
    return set()


def _loop(loop, counter):
    """A loop whose body exits early, as flag allocations followed by the guarded loop."""
    kinds = _exits(loop.body)
    if not kinds:
        return loop
    counter[0] += 1
    flags = {k: N.Buffer(f"{k}_flag{counter[0]}", (_ONE,), "int32", "local.var", loop.span) for k in kinds}
    body = _guard_seq(_stmts(loop.body), flags)
    if "continue" in flags:
        body = [_set(flags["continue"], _ZERO, loop.span)] + body
    body_stmt = _seq(body, loop.body)
    if isinstance(loop, N.While):
        cond = loop.cond
        if "break" in flags:
            cond = N.BoolOp("and", (_clear(flags["break"]), cond), loop.cond.span)
        new = N.While(cond, body_stmt, loop.span)
    else:
        if "break" in flags:
            body_stmt = N.If(_clear(flags["break"]), body_stmt, None)
        new = dataclasses.replace(loop, body=body_stmt)
    allocs = [N.Allocate(b, _ZERO, loop.span) for b in flags.values()]
    return N.SeqStmt(tuple(allocs + [new]), loop.span)


def _guard_seq(stmts: list, flags: dict) -> list:
    """Statements with exits turned into flag stores; what follows a possible exit runs only without one."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, (N.Break, N.Continue)):
            out.append(_set(flags[type(s).__name__.lower()], _ONE, s.span))
            return out  # the rest of the block is unreachable
        if not _exits(s):
            out.append(s)
            continue
        out.append(_guard_stmt(s, flags))
        rest = _guard_seq(stmts[i + 1:], flags)
        if rest:
            out.append(N.If(_no_exit(flags), _seq(rest, None), None))
        return out
    return out


def _guard_stmt(s, flags: dict):
    if isinstance(s, N.SeqStmt):
        return _seq(_guard_seq(list(s.stmts), flags), s)
    if isinstance(s, N.If):
        other = _seq(_guard_seq(_stmts(s.else_body), flags), s.else_body) if s.else_body is not None else None
        return N.If(s.cond, _seq(_guard_seq(_stmts(s.then_body), flags), s.then_body), other, s.span)
    return s


def _stmts(s) -> list:
    return list(s.stmts) if isinstance(s, N.SeqStmt) else [s]


def _seq(stmts: list, like):
    if len(stmts) == 1:
        return stmts[0]
    return N.SeqStmt(tuple(stmts), getattr(like, "span", None))


def _set(buf: N.Buffer, value, span) -> N.Store:
    return N.Store(buf, (_ZERO,), value, span)


def _clear(buf: N.Buffer):
    return N.Compare("==", N.Load(buf, (_ZERO,)), _ZERO)


def _no_exit(flags: dict):
    tests = [_clear(b) for b in flags.values()]
    return tests[0] if len(tests) == 1 else N.BoolOp("and", tuple(tests))
