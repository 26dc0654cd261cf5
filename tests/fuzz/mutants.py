"""Mutation fuzzing of the frontend: seeded mutants of the example kernels, and the property every one must keep.

`mutants(rng, seeds)` yields mutated file texts (numbers, operators, names, deletions, deep nesting, huge
literals, argument lists); `check_one(text)` runs `check_source` under a wall-clock alarm and returns a problem
string (an exception, an internal-error, a run over the time limit) or None. Pure Python, no tvm: the tests run
a bounded slice, `benchmarks/fuzz_check.py` the long run.
"""
from __future__ import annotations

import io
import random
import signal
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 2.0

NUMBERS = ("0", "-1", "1", "3", "7", "-128", "0.5", "1e308", "float('inf')", "float('nan')", "-0.0", "2**31",
           "2**31 - 1", "2**63", "10**18", "10**100**100", "1 << 65536", "4294967296**64-1", "9" * 4000, "True",
           "None", "(1, 2)", "[]", "'x'", "T.float16", "-(2**40)", "1 // 0", "256 % 0")
OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "<", "==", "and", "or")
NAMES = ("T.max", "T.min", "T.ceildiv", "T.Parallel", "T.serial", "T.Pipelined", "T.alloc_shared", "T.copy", "T.gemm",
         "T.Kernel", "T.float32", "T.int8", "T.handle", "T.reduce_sum", "T.atomic_add", "T.fill", "T.clear", "range",
         "len", "print", "None", "undefined_name", "__import__", "T.exp", "T.alloc_fragment", "T.dynamic", "lambda: 0")
WRAPS = ("({})", "T.max({}, 1)", "[{}]", "({},)", "-{}", "T.ceildiv({}, 1)", "({} if 1 else 2)", "int({})", "{} + 0")


def seeds() -> list[tuple[str, str]]:
    """(name, text) of every example kernel file, clean and erroneous."""
    files = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "examples" / "errors").glob("*.py"))
    return [(p.name, p.read_text()) for p in files]


def _tokens(text: str):
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.start[0] == t.end[0]]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def _replace(text: str, tok, new: str) -> str:
    lines = text.splitlines(keepends=True)
    line = lines[tok.start[0] - 1]
    lines[tok.start[0] - 1] = line[:tok.start[1]] + new + line[tok.end[1]:]
    return "".join(lines)


def _pick(rng, toks, kinds, strings=None):
    pool = [t for t in toks if t.type in kinds and (strings is None or t.string in strings)]
    return rng.choice(pool) if pool else None


def mutate_once(text: str, rng: random.Random) -> str:
    """One random mutation of a file's text (the text itself when the chosen mutation has no target)."""
    toks = _tokens(text)
    kind = rng.randrange(9)
    if kind == 0 and (t := _pick(rng, toks, (tokenize.NUMBER,))):
        return _replace(text, t, rng.choice(NUMBERS))
    if kind == 1 and (t := _pick(rng, toks, (tokenize.OP,), set(OPERATORS))):
        return _replace(text, t, rng.choice(OPERATORS))
    if kind == 2 and (t := _pick(rng, toks, (tokenize.NAME,))):
        names = [x.string for x in toks if x.type == tokenize.NAME]
        return _replace(text, t, rng.choice(NAMES + tuple(names)))
    if kind == 3 and (t := _pick(rng, toks, (tokenize.NAME, tokenize.NUMBER, tokenize.OP))):
        return _replace(text, t, "")
    if kind == 4:
        lines = text.splitlines(keepends=True)
        i = rng.randrange(len(lines))
        return "".join(lines[:i] + lines[i + 1:] if rng.random() < 0.6 else lines[:i + 1] + lines[i:])
    if kind == 5 and (t := _pick(rng, toks, (tokenize.NAME, tokenize.NUMBER))):
        wrapped = t.string
        for _ in range(rng.choice((2, 18, 60, 200))):
            wrapped = rng.choice(WRAPS).format(wrapped)
        return _replace(text, t, wrapped)
    if kind == 6 and (t := _pick(rng, toks, (tokenize.NUMBER,))):
        return _replace(text, t, rng.choice(("10**100**100", "1 << 65536", "9" * 4000, "2**4096", "1e400")))
    if kind == 7 and (t := _pick(rng, toks, (tokenize.OP,), {","})):
        return _replace(text, t, rng.choice(("", ", 0,", ", *()", ", **{}")))
    if kind == 8 and (t := _pick(rng, toks, (tokenize.NAME,))):
        return _replace(text, t, t.string + rng.choice(("_", "2", ".x", "()", "[0]")))
    return text


def mutants(rng: random.Random, count: int, max_mutations: int = 3):
    """`count` (seed name, mutant text) pairs, each with 1..max_mutations mutations of a random seed."""
    pool = seeds()
    for _ in range(count):
        name, text = rng.choice(pool)
        for _ in range(rng.randint(1, max_mutations)):
            text = mutate_once(text, rng)
        yield name, text


class _Overrun(Exception):
    pass


def _alarm(signum, frame):
    raise _Overrun()


def check_one(text: str, limit_s: float = LIMIT_S, hard_s: float = 20.0) -> tuple[float, str | None]:
    """Check one mutant: (seconds, problem) where problem is None, or says what broke the property."""
    from tilelang_core.check import check_source

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, hard_s)
    start = time.perf_counter()
    try:
        result = check_source(text, "mutant.py")
        problem = next((f"internal-error: {d.message}" for d in result.diagnostics if d.code == "internal-error"),
                       None)
    except _Overrun:
        problem = f"hang: still running after {hard_s:g} s"
    except BaseException as exc:  # noqa: BLE001 - the property: nothing escapes
        problem = f"exception: {type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - start
    if problem is None and seconds > limit_s:
        problem = f"slow: {seconds:.2f} s"
    return seconds, problem


def lower_one(text: str, target: str = "sm_90a") -> tuple[bool, str | None]:
    """Lower the first kernel of a check-clean mutant: (lowered at all, problem). A CompileError with a user-facing
    code is fine; an internal-error, TVM's raw 'Check failed' text or any other exception is a problem."""
    from tilelang_core.check import check_source
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import lower

    result = check_source(text, "mutant.py", targets=(target,))
    if result.errors or not result.kernels:
        return False, None
    try:
        lower(result.kernels[0], target)
    except CompileError as exc:
        bad = [d for d in exc.diagnostics if d.code == "internal-error" or "Check failed" in d.message]
        return True, (f"{bad[0].code}: {bad[0].message[:300]}" if bad else None)
    except BaseException as exc:  # noqa: BLE001 - the property: nothing escapes
        return True, f"exception: {type(exc).__name__}: {str(exc)[:300]}"
    return True, None
