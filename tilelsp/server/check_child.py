"""The check child's side: the loop that `python -m tilelsp.server.check_child` runs for the server's CheckPool (each
request checked by `features.check.run_check`): one pickled (text, path, targets) request in, one pickled CheckResult
out, each framed by an 8-byte length (an empty frame first says the child is warm). It imports only the check path
(no asyncio, no lsprotocol), so a fresh child is ready quickly.
"""
from __future__ import annotations

import os
import pickle
import struct
import sys

from tilelang_core.check import CheckResult
from tilelang_core.target import DEFAULT_ARCH

from tilelsp.features.check import internal_error, run_check

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
