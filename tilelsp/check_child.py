"""The check child's side: `run_check` (the fast check, guarded and size-capped) and the loop that
`python -m tilelsp.check_child` runs for the server's CheckPool: one pickled (text, path, targets) request in,
one pickled CheckResult out, each framed by an 8-byte length (an empty frame first says the child is warm). It imports only the check path (no asyncio,
no lsprotocol), so a fresh child is ready quickly.
"""
from __future__ import annotations

import os
import pickle
import struct
import sys

from tilelang_core.check import CheckResult
from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile, Span
from tilelang_core.target import DEFAULT_ARCH

MAX_CHECK_CHARS = 1_000_000  # the fast check is skipped above this size (a 10 MB file stays cheap)
HEADER = struct.Struct("<Q")
WARM_UP = """import tilelang
import tilelang.language as T

@tilelang.jit
def warm(N, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            s = T.alloc_shared((block,), T.float16)
            f = T.alloc_fragment((block,), T.float32)
            T.copy(A[bx * block], s)
            for i in T.Parallel(block):
                f[i] = T.max(s[i], 0)
            T.copy(f, B[bx * block])
    return main

kernel = warm(4096)
"""


def too_large(source: SourceFile) -> Diagnostic | None:
    """An info diagnostic when a file is too large for the fast check (which is then skipped)."""
    if len(source.text) <= MAX_CHECK_CHARS:
        return None
    return Diagnostic("file-too-large", Severity.INFO,
                      f"file has {len(source.text):,} characters; tilelsp checks files up to {MAX_CHECK_CHARS:,} "
                      "characters, so this one was skipped (split the kernels into smaller files)",
                      Span(1, 0, 1, len(source.line_text(1))))


def internal_error(exc: BaseException, what: str) -> Diagnostic:
    """A diagnostic that reports an unexpected failure of the checker itself, at the top of the file."""
    return Diagnostic("internal-error", Severity.ERROR,
                      f"tilelsp could not {what}: {type(exc).__name__}: {exc} (please report this with the file)",
                      Span(1, 0, 1, 0))


def run_check(text: str, path: str, targets) -> CheckResult:
    """`check_source` with the size cap and a guard: bad input yields diagnostics, never an exception."""
    source = SourceFile(text, path)
    big = too_large(source)
    if big is not None:
        return CheckResult(source, [], [big], None, tuple(targets))
    try:
        import warnings

        from tilelang_core.check import check_source

        with warnings.catch_warnings():  # ast.parse warns about the user's code: not ours to print
            warnings.simplefilter("ignore")
            return check_source(text, path, tuple(targets))
    except RecursionError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (nesting too deep)")], None, tuple(targets))
    except MemoryError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (out of memory)")], None, tuple(targets))
    except Exception as exc:  # noqa: BLE001 - the server must survive any checker bug
        return CheckResult(source, [], [internal_error(exc, "check this file")], None, tuple(targets))


def main() -> int:
    """The child's loop: read a request, check, write the pickled result (stray prints go to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    run_check(WARM_UP, "<warm-up>", (DEFAULT_ARCH,))  # import the whole check path before the first request
    out.write(HEADER.pack(0))  # ready
    out.flush()
    while True:
        head = inp.read(HEADER.size)
        if len(head) < HEADER.size:
            return 0
        text, path, targets = pickle.loads(inp.read(HEADER.unpack(head)[0]))
        result = run_check(text, path, targets)
        try:
            data = pickle.dumps(result)
        except Exception as exc:  # noqa: BLE001 - a result that cannot travel is reported, not lost
            data = pickle.dumps(CheckResult(result.source, [], [internal_error(exc, "send this file's check result")],
                                            None, tuple(targets)))
        out.write(HEADER.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the server has gone (it exited, or stopped this child): no one is left to answer
        os._exit(0)
