"""CUDA lowering of T.rng_init / T.rng_rand / T.rng_rand_float: the Philox4x32-10 generator with curand's state
semantics (key = seed, the subsequence in the counter's high words, the offset skipped ahead in the counter, four
outputs per counter), written out here because the generated file must not need curand_kernel.h. Its constants and
a pure-Python reference of the stream are in codegen/philox.py, which the CPU backend's TIR (cpu/rng.py) shares."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from .. import philox

PHILOX = r"""
namespace tl {
// state: ctr[0..3], key[4..5], output[6..9], index of the next output[10]
__host__ __device__ __forceinline__ void philox_block(unsigned* s) {
  unsigned c0 = s[0], c1 = s[1], c2 = s[2], c3 = s[3], k0 = s[4], k1 = s[5];
  for (int r = 0; r < %d; ++r) {
    unsigned long long p0 = 0x%08Xull * c0, p1 = 0x%08Xull * c2;
    unsigned n0 = (unsigned)(p1 >> 32) ^ c1 ^ k0, n2 = (unsigned)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned)p1; c3 = (unsigned)p0; c0 = n0; c2 = n2;
    k0 += 0x%08Xu; k1 += 0x%08Xu;
  }
  s[6] = c0; s[7] = c1; s[8] = c2; s[9] = c3;
}
__host__ __device__ __forceinline__ void philox_add(unsigned* s, unsigned long long n, int word) {
  for (int w = word; w < 4 && n; ++w) {
    unsigned long long sum = (unsigned long long)s[w] + (n & 0xFFFFFFFFull);
    s[w] = (unsigned)sum;
    n = (n >> 32) + (sum >> 32);
  }
}
__host__ __device__ __forceinline__ void philox_init(unsigned* s, unsigned long long seed,
                                                     unsigned long long seq, unsigned long long off) {
  s[0] = s[1] = s[2] = s[3] = 0u;
  s[4] = (unsigned)seed; s[5] = (unsigned)(seed >> 32);
  philox_add(s, seq, 2);
  philox_add(s, off >> 2, 0);
  s[10] = (unsigned)(off & 3ull);
  philox_block(s);
}
__host__ __device__ __forceinline__ unsigned philox_next(unsigned* s) {
  unsigned r = s[6 + s[10]];
  if (++s[10] == 4u) { philox_add(s, 1ull, 0); philox_block(s); s[10] = 0u; }
  return r;
}
__host__ __device__ __forceinline__ float philox_uniform(unsigned* s) {
  return philox_next(s) * 2.3283064e-10f + (2.3283064e-10f / 2.0f);
}
}  // namespace tl
""" % (philox.ROUNDS, philox.M0, philox.M1, philox.W0, philox.W1)


class RngOps:
    """The thread's generator state (one local array) and its calls, emitted through a KernelEmitter `em`."""

    def __init__(self, em):
        self.em = em
        self.state = None

    def _state(self) -> str:
        if self.state is None:
            self.state = self.em.name(object(), "rng_state")
            self.em.frame.allocs.append(f'{self.state} = T.alloc_buffer((11,), "uint32", scope="local")')
            self.em.device_library.need(PHILOX)
        return f"{self.state}.ptr_to([0])"

    @staticmethod
    def draws(e) -> bool:
        """True when expression `e` advances the thread's generator (T.rng_rand / T.rng_rand_float)."""
        return any(isinstance(n, N.Call) and n.name in philox.DRAW_CALLS for n in walk(e))

    def statement(self, s: N.Evaluate) -> bool:
        """`T.rng_init(seed, seq, off)`; False for other statements."""
        call = s.value
        if not isinstance(call, N.Call) or call.name != "rng_init":
            return False
        exprs = self.em.exprs
        seed, seq, off = call.args
        seq_text = (self._default_subsequence() if isinstance(seq, N.Const) and seq.value == -1
                    else exprs.emit(seq, "uint64"))
        self.em.line(f'T.evaluate(T.call_extern("void", "tl::philox_init", {self._state()}, '
                     f'{exprs.emit(seed, "uint64")}, {seq_text}, {exprs.emit(off, "uint64")}))')
        return True

    def _default_subsequence(self) -> str:
        """threadIdx.x + blockIdx.x * blockDim.x, as TileLang computes it (threads launch flat here: threadIdx.x of
        threads=(x, y, z) is tx % x)."""
        launch = self.em.plan.func.launch
        dims = launch.threads if launch is not None else ()
        if len(dims) > 1:
            x = self.em.idx(dims[0])
            return f"T.Cast(\"uint64\", T.floormod(tx, {x}) + {self._block_index()} * {x})"
        return f"T.Cast(\"uint64\", tx + {self._block_index()} * {self.em.threads})"

    def _block_index(self) -> str:
        launch = self.em.plan.func.launch
        return self.em.name(launch.block_vars[0]) if launch is not None and launch.block_vars else "0"

    def expr(self, exprs, e: N.Call) -> str | None:
        """`T.rng_rand()` / `T.rng_rand_float()`; None for other calls (an ExprEmitter hook)."""
        if e.name == "rng_rand":
            return f'T.call_extern("uint32", "tl::philox_next", {self._state()})'
        if e.name == "rng_rand_float":
            return f'T.call_extern("float32", "tl::philox_uniform", {self._state()})'
        return None
