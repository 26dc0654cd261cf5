"""`tilelang.cuda.intrinsics.macro.mma_macro_generator.TensorCoreIntrinEmitter`: warp-level tensor-core GEMM
macros (`ldmatrix_a`, `ldmatrix_b`, `mma`, `mma_atom`, `stmatrix`) that a kernel calls on its own per-thread buffers
(`mma` covers every (i, j) tile of the warp; `mma_atom(A_local, B_local, C_local, i, j)` the one tile i, j). Also
`tilelang.cuda.language.intrinsics`, where newer TileLang keeps the emitter.

Each emitter instance builds its macros as `@T.macro` closures over its tile constants; the kernel frontend
sees the instance as a namespace (`__tilelang_namespace__`) and inlines them like any macro. They expand to
thread-level code: the loads are `T.mma_fragment_load` (ldmatrix on CUDA), the store a per-thread loop over the
registers of the `mma.sync` fragment layouts (below), the product `T.ptx_mma` (one `mma.sync.aligned.m16n8kK` per
16 x 8 tile).

Fragment layouts, for lane `l` of a warp and `e` = elements per 32-bit register (2 for 16-bit, 4 for 8-bit
inputs; K = 8 * e):
- A, one 16 x K tile per warp row, `local_size_a` values: value v is register q = v // e, row
  `l // 4 + 8 * (q % 2)`, column `(l % 4) * e + v % e + 4 * e * (q // 2)`;
- B, one n_dim x K tile per warp column (n_dim 16: two 8-column halves, one `mma` each), value v of half h:
  column (n) `l // 4 + 8 * h`, row (k) as A's column with q = (v % half) // e;
- C, 16 x n_dim per (warp row, warp column), value v of half h = v // 4: row `l // 4 + 8 * (v % 4 // 2)`,
  column `2 * (l % 4) + v % 2 + 8 * h`.
Warps are numbered as TileLang does (`is_m_first=False`): warp_m = warp % block_row_warps, warp_n = warp //
block_row_warps.
"""
from __future__ import annotations

from .. import language as T
from ..language.dtypes import dtype as _dtype
from . import UnsupportedFeatureError

__all__ = ["TensorCoreIntrinEmitter"]

_ABBREV = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "int8": "int8", "uint8": "uint8",
           "int32": "int32"}
_OPERANDS = {"float16", "bfloat16", "int8", "uint8"}
_FEATURE = "tilelang.cuda.intrinsics.macro.mma_macro_generator.TensorCoreIntrinEmitter"


class TensorCoreIntrinEmitter:
    """Tensor-core macros for a block of block_row_warps x block_col_warps warps, each computing a
    warp_row_tiles x warp_col_tiles tile of C in chunks of `chunk` along K."""

    __tilelang_namespace__ = True
    WARP_SIZE = 32
    M_DIM = 16

    def __init__(self, a_dtype="float16", b_dtype="float16", accum_dtype="float16", a_transposed=False,
                 b_transposed=False, block_row_warps=2, block_col_warps=2, warp_row_tiles=8, warp_col_tiles=8,
                 chunk=16, reduce_k=1, num_elems_per_byte=1, is_m_first=False, thread_var=None):
        self.a_dtype, self.b_dtype, self.accum_dtype = (str(_dtype(d)) for d in (a_dtype, b_dtype, accum_dtype))
        if self.a_dtype not in _OPERANDS or self.b_dtype != self.a_dtype or reduce_k != 1 or is_m_first or \
                thread_var is not None or num_elems_per_byte != 1:
            raise UnsupportedFeatureError(
                f"{_FEATURE}({self.a_dtype} x {self.b_dtype}, reduce_k={reduce_k}, is_m_first={is_m_first})",
                "tilelang_core's emitter covers float16, bfloat16, int8 and uint8 operands of one dtype, reduce_k=1, is_m_first=False "
                "and the kernel's own thread binding; write the GEMM with T.gemm otherwise")
        if warp_row_tiles % 16 or warp_col_tiles % 8 or warp_row_tiles < 16:
            raise ValueError(f"warp_row_tiles must be a multiple of 16 and warp_col_tiles of 8 (got "
                             f"{warp_row_tiles} and {warp_col_tiles})")
        self.a_transposed, self.b_transposed = bool(a_transposed), bool(b_transposed)
        self.block_row_warps, self.block_col_warps = block_row_warps, block_col_warps
        self.warp_row_tiles, self.warp_col_tiles, self.chunk = warp_row_tiles, warp_col_tiles, chunk
        bits = _dtype(self.a_dtype).bits
        self.k_dim = min(256 // bits, chunk)
        if self.k_dim != 256 // bits:
            raise ValueError(f"chunk must be at least {256 // bits} for {self.a_dtype} (got {chunk})")
        self.n_dim = 16 if warp_col_tiles % 16 == 0 else 8
        self.micro_size_x, self.micro_size_y, self.micro_size_k = self.M_DIM, self.n_dim, self.k_dim
        self.warp_rows, self.warp_cols = warp_row_tiles // self.M_DIM, warp_col_tiles // self.n_dim
        self.local_size_a = self.M_DIM * self.k_dim // self.WARP_SIZE
        self.local_size_b = self.n_dim * self.k_dim // self.WARP_SIZE
        self.local_size_out = self.M_DIM * self.n_dim // self.WARP_SIZE
        self.mma_prefix = f"m16n8k{self.k_dim}"
        self.a_dtype_abbrv, self.b_dtype_abbrv = _ABBREV[self.a_dtype], _ABBREV[self.b_dtype]
        self.accum_dtype_abbrv = _ABBREV.get(self.accum_dtype, self.accum_dtype)
        self.reduce_k, self.is_m_first, self.thread_var = reduce_k, is_m_first, thread_var
        self.threads = self.WARP_SIZE * block_row_warps * block_col_warps
        self.ldmatrix_a, self.ldmatrix_b, self.mma, self.mma_atom, self.stmatrix = _macros(self)

    @property
    def mma_num_inst_m(self) -> int:
        """MMA tiles along M per warp."""
        return self.warp_rows

    @property
    def mma_num_inst_n(self) -> int:
        """MMA tiles along N per warp."""
        return self.warp_cols


def _macros(em: TensorCoreIntrinEmitter):
    """The macros of one emitter, closed over its constants."""
    block_row_warps, block_col_warps = em.block_row_warps, em.block_col_warps
    warp_rows, warp_cols, warp_row_tiles, warp_col_tiles = em.warp_rows, em.warp_cols, em.warp_row_tiles, \
        em.warp_col_tiles
    chunk, micro_k, n_dim = em.chunk, em.k_dim, em.n_dim
    local_size_a, local_size_b, local_size_out = em.local_size_a, em.local_size_b, em.local_size_out
    a_transposed, b_transposed = em.a_transposed, em.b_transposed
    per_reg = 32 // _dtype(em.a_dtype).bits
    b_half = local_size_b // (n_dim // 8)  # B registers per 8-column half
    accum, prefix = em.accum_dtype, em.mma_prefix
    a_abbrev, b_abbrev, c_abbrev = em.a_dtype_abbrv, em.b_dtype_abbrv, em.accum_dtype_abbrv

    @T.macro
    def ldmatrix_a(A_local, A_shared, ki, rk=0):
        tx = T.get_thread_binding()
        warp_m = tx // 32 % block_row_warps
        for i in T.unroll(warp_rows):
            row = warp_m * warp_row_tiles + i * 16
            k = rk * chunk + ki * micro_k
            if a_transposed:
                T.mma_fragment_load(A_local[i * local_size_a], A_shared[k, row], "a", True, per_reg, local_size_a)
            else:
                T.mma_fragment_load(A_local[i * local_size_a], A_shared[row, k], "a", False, per_reg, local_size_a)

    @T.macro
    def ldmatrix_b(B_local, B_shared, ki, rk=0):
        tx = T.get_thread_binding()
        warp_n = tx // (32 * block_row_warps) % block_col_warps
        for j in T.unroll(warp_cols):
            n = warp_n * warp_col_tiles + j * n_dim
            k = rk * chunk + ki * micro_k
            if b_transposed:
                T.mma_fragment_load(B_local[j * local_size_b], B_shared[n, k], "b", False, per_reg, local_size_b)
            else:
                T.mma_fragment_load(B_local[j * local_size_b], B_shared[k, n], "b", True, per_reg, local_size_b)

    @T.macro
    def mma(A_local, B_local, C_local, k_inner=0):
        for i in T.unroll(warp_rows):
            for j in T.unroll(warp_cols):
                for h in T.unroll(n_dim // 8):
                    T.ptx_mma(accum, prefix, "row", "col", a_abbrev, b_abbrev, c_abbrev, A_local.data,
                              i * local_size_a, B_local.data, j * local_size_b + h * b_half, C_local.data,
                              (i * warp_cols + j) * local_size_out + h * 4, False)

    @T.macro
    def mma_atom(A_local, B_local, C_local, i, j, k_inner=0):
        for h in T.unroll(n_dim // 8):
            T.ptx_mma(accum, prefix, "row", "col", a_abbrev, b_abbrev, c_abbrev, A_local.data, i * local_size_a,
                      B_local.data, j * local_size_b + h * b_half, C_local.data,
                      (i * warp_cols + j) * local_size_out + h * 4, False)

    @T.macro
    def stmatrix(C_local, C_buf, pid_m=None, pid_n=None):
        tx = T.get_thread_binding()
        lane = tx % 32
        warp_m = tx // 32 % block_row_warps
        warp_n = tx // (32 * block_row_warps) % block_col_warps
        for i in T.unroll(warp_rows):
            for j in T.unroll(warp_cols):
                for v in T.unroll(local_size_out):
                    row = lane // 4 + 8 * (v % 4 // 2)
                    col = lane % 4 * 2 + v % 2 + 8 * (v // 4)
                    value = C_local[(i * warp_cols + j) * local_size_out + v]
                    if pid_m is not None:
                        C_buf[(pid_m * block_row_warps * warp_rows + warp_m * warp_rows + i) * 16 + row,
                              (pid_n * block_col_warps * warp_cols + warp_n * warp_cols + j) * n_dim + col] = value
                    elif len(C_buf.shape) == 4:
                        C_buf[warp_m * warp_rows + i, warp_n * warp_cols + j, row, col] = value
                    else:
                        C_buf[(warp_m * warp_rows + i) * 16 + row, (warp_n * warp_cols + j) * n_dim + col] = value

    return ldmatrix_a, ldmatrix_b, mma, mma_atom, stmatrix


def __getattr__(name: str):
    """The module's other emitters (INT4, ladder-transform variants): importable, unsupported when called."""
    if name.startswith("__"):
        raise AttributeError(name)
    from . import Unsupported

    return Unsupported(f"tilelang.cuda.intrinsics.macro.mma_macro_generator.{name}",
                       "tilelang_core's emitter is TensorCoreIntrinEmitter; write the kernel with T.gemm otherwise")
