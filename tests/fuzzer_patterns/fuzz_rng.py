"""Random numbers (T.rng_init / T.rng_rand / T.rng_rand_float, the rand_uint corpus example): not a fuzzer report but
our own Philox4x32-10, whose CUDA output must equal the CPU backend's bit for bit. The references are the pure-Python
stream of tilelang_core/codegen/philox.py (checked against Random123's known answers in tests/codegen/test_philox.py):
the CPU test shows the CPU backend draws it, benchmarks/gpu_regressions.py that the GPU does."""
from __future__ import annotations

from fuzz_harness import Case

from tilelang_core.codegen.philox import PhiloxStream, default_subsequence, to_float32

RAND_1D = """
@T.prim_func
def k(A: T.Tensor((512,), "uint32")):
    with T.Kernel(4, threads=1) as bx:
        tx = T.get_thread_binding()
        T.rng_init(123, 0, bx * 128 + tx * 128)
        for i, j in T.Parallel(1, 128):
            idx = (bx + i) * 128 + j
            if idx < 500:
                A[idx] = T.rng_rand()
"""

SPREAD = """
@T.prim_func
def k(A: T.Tensor((1024,), "uint32")):
    with T.Kernel(2, threads=128) as bx:
        tx = T.get_thread_binding()
        T.rng_init(42, 0, bx * 512 + tx * 4)
        for i, j in T.Parallel(128, 4):
            A[bx * 512 + i * 4 + j] = T.rng_rand()
"""

DEFAULT_SEQ = """
@T.prim_func
def k(U: T.Tensor((3, 2, 32, 5), "float32"), R: T.Tensor((3, 2, 32), "uint32")):
    with T.Kernel(3, threads=(32, 2)) as bx:
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        T.rng_init(7)
        for k in T.serial(5):
            U[bx, ty, tx, k] = T.rng_rand_float()
        r = T.rng_rand()
        R[bx, ty, tx] = r ^ T.rng_rand()
"""

CARRY = """
@T.prim_func
def k(A: T.Tensor((64, 8), "uint32")):
    with T.Kernel(2, threads=32) as bx:
        tx = T.get_thread_binding()
        T.rng_init(T.uint64(0x0123456789ABCDEF), T.uint64(4294967301) + bx, T.uint64(17179869174) + tx)
        for k in T.serial(8):
            A[bx * 32 + tx, k] = T.rng_rand()
"""

LET_ONCE = """
@T.prim_func
def k(A: T.Tensor((2, 64), "uint32"), F: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        T.rng_init(3, tx, 5)
        v = T.rng_rand()
        f = T.rng_rand_float()
        A[0, tx] = v + v
        A[1, tx] = v
        F[tx] = f * f
"""


def _zeros(shape, dtype):
    def make(device):
        import torch

        return [torch.zeros(shape, dtype=getattr(torch, dtype), device=device)]
    return make


def _tensor(values, dtype, shape=None):
    import torch

    out = torch.tensor(values, dtype=torch.int64 if dtype == "uint32" else torch.float32)
    out = out.to(torch.uint32) if dtype == "uint32" else out
    return out.reshape(shape) if shape else out


def _rand_1d(args):
    out = [0] * 512
    for bx in range(4):
        stream = PhiloxStream(123, 0, bx * 128)
        for j in range(128):
            if bx * 128 + j < 500:
                out[bx * 128 + j] = stream.next()
    return _tensor(out, "uint32")


def _spread(args):
    out = [0] * 1024
    for bx in range(2):
        for tx in range(128):
            stream = PhiloxStream(42, 0, bx * 512 + tx * 4)
            for it in range(4):  # CUDA's T.Parallel split: flat iteration it * 128 + tx runs on thread tx
                out[bx * 512 + it * 128 + tx] = stream.next()
    return _tensor(out, "uint32")


def _default_seq(args):
    uniforms, bits = [], []
    for bx in range(3):
        for ty in range(2):
            for tx in range(32):
                stream = PhiloxStream(7, default_subsequence(tx, bx, 32), 0)
                uniforms += [stream.uniform() for _ in range(5)]
                bits.append(stream.next() ^ stream.next())
    return [_tensor(uniforms, "float32", (3, 2, 32, 5)), _tensor(bits, "uint32", (3, 2, 32))]


def _carry(args):
    out = []
    for bx in range(2):
        for tx in range(32):
            out.append(PhiloxStream(0x0123456789ABCDEF, 4294967301 + bx, 17179869174 + tx).take(8))
    return _tensor(out, "uint32")


def _let_once(args):
    doubled, once, squares = [], [], []
    for tx in range(64):
        stream = PhiloxStream(3, tx, 5)
        v, f = stream.next(), stream.uniform()
        doubled.append((v + v) & 0xFFFFFFFF)
        once.append(v)
        squares.append(to_float32(f * f))
    return [_tensor(doubled + once, "uint32", (2, 64)), _tensor(squares, "float32")]


CASES = [
    Case("rng_rand: rand_uint's 1-D stream, one thread per block, guarded tail", "rand_uint (corpus, ours)", RAND_1D,
         _zeros((512,), "uint32"), _rand_1d),
    Case("rng_rand in T.Parallel over 128 threads (CUDA's iteration split)", "rand_uint (corpus, ours)", SPREAD,
         _zeros((1024,), "uint32"), _spread),
    Case("rng_init(seed) default subsequence, threads=(32, 2); rng_rand_float; two draws", "rand_uint (corpus, ours)",
         DEFAULT_SEQ, lambda device: _zeros((3, 2, 32, 5), "float32")(device) + _zeros((3, 2, 32), "uint32")(device),
         _default_seq, outputs=(0, 1)),
    Case("rng_init with a 64-bit seed, subsequence and offset; counter carry", "rand_uint (corpus, ours)", CARRY,
         _zeros((64, 8), "uint32"), _carry),
    Case("a let-bound draw (v = T.rng_rand()) is drawn once, however often v is read", "rand_uint (corpus, ours)",
         LET_ONCE, lambda device: _zeros((2, 64), "uint32")(device) + _zeros((64,), "float32")(device), _let_once,
         outputs=(0, 1)),
]
