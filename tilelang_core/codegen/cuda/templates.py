"""The CUDA device library every generated kernel includes: cp.async, swizzled ldmatrix + mma.sync gemm,
an FMA gemm fallback, quad reductions and atomics (our own code, namespace `tl`)."""
from __future__ import annotations

PRELUDE = r"""
// ---- tilelang_core device library -------------------------------------------------------
#include <cuda_fp16.h>
#include <cuda_bf16.h>
namespace tl {
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
template <int BYTES>
__device__ __forceinline__ void cp_async(void* dst, const void* src, bool pred) {
  int n = pred ? BYTES : 0;
#if __CUDA_ARCH__ >= 800
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(n));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_u32(dst)), "l"(src), "n"(BYTES), "r"(n));
  }
#else
  const char* s = static_cast<const char*>(src); char* d = static_cast<char*>(dst);
  for (int i = 0; i < BYTES; ++i) d[i] = pred ? s[i] : 0;
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}
// XOR swizzle of 16-byte chunks: row r of a tile with CH chunks per row.
template <int CH>
__device__ __forceinline__ int swz_chunk(int r, int c) {
  if constexpr (CH >= 8) return c ^ (r & 7);
  else if constexpr (CH == 4) return c ^ ((r >> 1) & 3);
  else if constexpr (CH == 2) return c ^ ((r >> 2) & 1);
  else return c;
}
// Element offset of (r, c) in a 16-bit tile with COLS columns, swizzled when SW.
template <int COLS, bool SW>
__device__ __forceinline__ int off16(int r, int c) {
  if constexpr (SW) return r * COLS + swz_chunk<COLS / 8>(r, c >> 3) * 8 + (c & 7);
  else return r * COLS + c;
}
__device__ __forceinline__ void ldsm_x4(unsigned* d, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned* d, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x2(unsigned* d, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(d[0]), "=r"(d[1]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x2_t(unsigned* d, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(d[0]), "=r"(d[1]) : "r"(smem_u32(p)));
}
template <typename T> struct MmaName;
__device__ __forceinline__ void mma16816(float* c, const unsigned* a, const unsigned* b, half) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma16816(float* c, const unsigned* a, const unsigned* b, __nv_bfloat16) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// fp16 accumulators: the same four elements per thread as float, packed two to a register (c0 c1 | c2 c3)
__device__ __forceinline__ void mma16816(half* c, const unsigned* a, const unsigned* b, half) {
  unsigned* d = reinterpret_cast<unsigned*>(c);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
               : "+r"(d[0]), "+r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// A fragments (16x16) of one m-atom at k-step kk. A stored [M][K] (TA=0) or [K][M] (TA=1), in a tile of LD
// columns at rows r0.., columns c0.. (a part of a larger tile; the whole tile when LD is the stored width).
template <int M, int K, bool TA, bool SW, int LD = (TA ? M : K), typename T>
__device__ __forceinline__ void load_a(unsigned* a, const T* A, int m0, int k0, int lane, int r0 = 0, int c0 = 0) {
  if constexpr (!TA) {
    int r = r0 + m0 + (lane & 15), c = c0 + k0 + (lane >> 4) * 8;
    ldsm_x4(a, A + off16<LD, SW>(r, c));
  } else {
    int r = r0 + k0 + (lane >> 4) * 8 + (lane & 7), c = c0 + m0 + ((lane >> 3) & 1) * 8;
    ldsm_x4_t(a, A + off16<LD, SW>(r, c));
  }
}
// B fragments for two n-atoms (n0, n0+8) at k-step k0. B stored [K][N] (TB=0) or [N][K] (TB=1).
template <int N, int K, bool TB, bool SW, int LD = (TB ? K : N), typename T>
__device__ __forceinline__ void load_b2(unsigned* b, const T* B, int n0, int k0, int lane, int r0 = 0, int c0 = 0) {
  if constexpr (!TB) {
    int r = r0 + k0 + (lane & 7) + ((lane >> 3) & 1) * 8, c = c0 + n0 + (lane >> 4) * 8;
    ldsm_x4_t(b, B + off16<LD, SW>(r, c));
  } else {
    int r = r0 + n0 + (lane & 7) + (lane >> 4) * 8, c = c0 + k0 + ((lane >> 3) & 1) * 8;
    ldsm_x4(b, B + off16<LD, SW>(r, c));
  }
}
template <int N, int K, bool TB, bool SW, int LD = (TB ? K : N), typename T>
__device__ __forceinline__ void load_b1(unsigned* b, const T* B, int n0, int k0, int lane, int r0 = 0, int c0 = 0) {
  int l = lane & 15;
  if constexpr (!TB) {
    ldsm_x2_t(b, B + off16<LD, SW>(r0 + k0 + l, c0 + n0));
  } else {
    ldsm_x2(b, B + off16<LD, SW>(r0 + n0 + (l & 7), c0 + k0 + (l >> 3) * 8));
  }
}
// C[M][N] (+)= A * B with A and B in shared memory; C (float, or half for half inputs) in the mma accumulator
// layout over WMxWN warps. A and B may be parts of wider tiles: LDA/LDB columns stored, the part at (ar0, ac0) /
// (br0, bc0) of the tile at A / B.
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, bool SWA, bool SWB, int LDA = (TA ? M : K),
          int LDB = (TB ? K : N), typename T, typename TC>
__device__ __forceinline__ void gemm_ss(const T* A, const T* B, TC* C, int ar0 = 0, int ac0 = 0, int br0 = 0,
                                        int bc0 = 0) {
  constexpr int MI = M / WM / 16, NI = N / WN / 8;
  int warp = threadIdx.x / 32 % (WM * WN), lane = threadIdx.x % 32;  // % : a warp-specialised role's warps
  int wm0 = (warp / WN) * (M / WM), wn0 = (warp % WN) * (N / WN);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    unsigned a[MI][4], b[NI][2];
#pragma unroll
    for (int i = 0; i < MI; ++i) load_a<M, K, TA, SWA, LDA>(a[i], A, wm0 + i * 16, k0, lane, ar0, ac0);
#pragma unroll
    for (int j = 0; j + 1 < NI; j += 2) {
      unsigned t[4];
      load_b2<N, K, TB, SWB, LDB>(t, B, wn0 + j * 8, k0, lane, br0, bc0);
      b[j][0] = t[0]; b[j][1] = t[1]; b[j + 1][0] = t[2]; b[j + 1][1] = t[3];
    }
    if constexpr (NI % 2) load_b1<N, K, TB, SWB, LDB>(b[NI - 1], B, wn0 + (NI - 1) * 8, k0, lane, br0, bc0);
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) mma16816(C + (i * NI + j) * 4, a[i], b[j], T());
  }
}
// Same with A in registers: a 16-bit fragment in the accumulator layout of an MxK tile over warps WMx1, each
// warp's rows replicated over the WN warps that split N (warp w holds the A rows of its M slice w / WN).
template <int M, int N, int K, int WM, int WN, bool TB, bool SWB, int LDB = (TB ? K : N), typename T, typename TC>
__device__ __forceinline__ void gemm_rs(const T* A, const T* B, TC* C, int br0 = 0, int bc0 = 0) {
  constexpr int MI = M / WM / 16, NI = N / WN / 8, KA = K / 8;
  int warp = threadIdx.x / 32 % (WM * WN), lane = threadIdx.x % 32;  // % : a warp-specialised role's warps
  int wn0 = (warp % WN) * (N / WN);
  const unsigned* a32 = reinterpret_cast<const unsigned*>(A);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    unsigned b[NI][2];
#pragma unroll
    for (int j = 0; j + 1 < NI; j += 2) {
      unsigned t[4];
      load_b2<N, K, TB, SWB, LDB>(t, B, wn0 + j * 8, k0, lane, br0, bc0);
      b[j][0] = t[0]; b[j][1] = t[1]; b[j + 1][0] = t[2]; b[j + 1][1] = t[3];
    }
    if constexpr (NI % 2) load_b1<N, K, TB, SWB, LDB>(b[NI - 1], B, wn0 + (NI - 1) * 8, k0, lane, br0, bc0);
#pragma unroll
    for (int i = 0; i < MI; ++i) {
      int base = (i * KA + k0 / 8) * 2;  // in 32-bit words: 4 halves per atom = 2 words
      unsigned a[4] = {a32[base], a32[base + 1], a32[base + 2], a32[base + 3]};
#pragma unroll
      for (int j = 0; j < NI; ++j) mma16816(C + (i * NI + j) * 4, a, b[j], T());
    }
  }
}
// FMA with A in registers (the gemm_rs layout, any dtypes; B unswizzled): the 4 lanes of a quad hold whole A
// rows between them, so each k-step shuffles A[row][k] from the lane that holds it; math in C's type.
template <int M, int N, int K, int WM, int WN, bool TB, typename TA_, typename TB_, typename TC_>
__device__ __forceinline__ void gemm_rs_fma(const TA_* A, const TB_* B, TC_* C) {
  constexpr int MI = M / WM / 16, NI = N / WN / 8, KA = K / 8;
  int warp = threadIdx.x / 32 % (WM * WN), lane = threadIdx.x % 32;
  int wn0 = (warp % WN) * (N / WN);
  for (int k = 0; k < K; ++k) {
    int holder = (lane & ~3) | ((k % 8) >> 1);
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        TC_ mine = static_cast<TC_>(A[(i * KA + k / 8) * 4 + h * 2 + (k & 1)]);
        TC_ a = __shfl_sync(0xffffffffu, mine, holder);
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            int col = wn0 + j * 8 + (lane % 4) * 2 + e;
            C[(i * NI + j) * 4 + h * 2 + e] += a * static_cast<TC_>(TB ? B[col * K + k] : B[k * N + col]);
          }
      }
  }
}
// FMA fallback with the same accumulator layout (any dtypes; no swizzle).
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, typename TA_, typename TB_, typename TC_>
__device__ __forceinline__ void gemm_fma(const TA_* A, const TB_* B, TC_* C) {
  constexpr int MI = M / WM / 16, NI = N / WN / 8;
  int warp = threadIdx.x / 32 % (WM * WN), lane = threadIdx.x % 32;  // % : a warp-specialised role's warps
  int wm0 = (warp / WN) * (M / WM), wn0 = (warp % WN) * (N / WN);
  for (int k = 0; k < K; ++k) {
#pragma unroll
    for (int r = 0; r < MI * NI * 4; ++r) {
      int atom = r / 4;
      int i = wm0 + (atom / NI) * 16 + lane / 4 + (r % 4) / 2 * 8;
      int j = wn0 + (atom % NI) * 8 + (lane % 4) * 2 + r % 2;
      float a = static_cast<float>(TA ? A[k * M + i] : A[i * K + k]);
      float b = static_cast<float>(TB ? B[j * K + k] : B[k * N + j]);
      C[r] = static_cast<TC_>(static_cast<float>(C[r]) + a * b);
    }
  }
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}
// exp2 without denormal support (TILELSP_FAST_EXP2=1): MUFU.EX2 alone, no range fix-ups around it
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_min(float x) {
  x = fminf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fminf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
// atomics return the element's previous value (T.atomic_*(..., return_prev=True)); a statement ignores it
__device__ __forceinline__ float atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double atomic_add(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ int atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ half atomic_add(half* p, half v) { return atomicAdd(p, v); }
__device__ __forceinline__ __nv_bfloat16 atomic_add(__nv_bfloat16* p, __nv_bfloat16 v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned int atomic_add(unsigned int* p, unsigned int v) { return atomicAdd(p, v); }
__device__ __forceinline__ long atomic_add(long* p, long v) {  // int64: two's complement add
  return (long)atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ unsigned long atomic_add(unsigned long* p, unsigned long v) {
  return (unsigned long)atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
// elements without a native atomic: compare-and-swap the aligned 32-bit word that holds them, x = f(x)
template <typename E, typename F>
__device__ __forceinline__ E atomic_update(E* p, F f) {
  static_assert(sizeof(E) <= 4, "atomic_update: 8, 16 or 32-bit elements");
  size_t addr = reinterpret_cast<size_t>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~size_t(3));
  unsigned int shift = (addr & 3) * 8;
  unsigned int mask = sizeof(E) == 4 ? 0xffffffffu : ((1u << (8 * sizeof(E))) - 1u) << shift;
  unsigned int old = *word, seen;
  E cur;
  do {
    seen = old;
    unsigned int raw = (seen & mask) >> shift;
    memcpy(&cur, &raw, sizeof(E));
    E next = f(cur);
    unsigned int bits = 0;
    memcpy(&bits, &next, sizeof(E));
    old = atomicCAS(word, seen, (seen & ~mask) | ((bits << shift) & mask));
  } while (old != seen);
  return cur;
}
// one fp4 (e2m1) element written into its half of a byte (element `index` of the tensor at `base`): the byte's
// other element is kept, and two threads writing the two halves do not race (compare-and-swap on the word)
__device__ __forceinline__ void store_fp4(void* base, long long index, unsigned char code) {
  unsigned char* byte = reinterpret_cast<unsigned char*>(base) + (index >> 1);
  unsigned int shift = (unsigned int)(index & 1) * 4u;
  atomic_update(byte, [=](unsigned char x) {
    return static_cast<unsigned char>((x & ~(0xFu << shift)) | ((code & 0xFu) << shift));
  });
}
template <typename I>
__device__ __forceinline__ I atomic_add_narrow(I* p, I v) {
  return atomic_update(p, [v](I x) { return static_cast<I>(x + v); });
}
__device__ __forceinline__ short atomic_add(short* p, short v) { return atomic_add_narrow(p, v); }
__device__ __forceinline__ unsigned short atomic_add(unsigned short* p, unsigned short v) { return atomic_add_narrow(p, v); }
__device__ __forceinline__ signed char atomic_add(signed char* p, signed char v) { return atomic_add_narrow(p, v); }
__device__ __forceinline__ unsigned char atomic_add(unsigned char* p, unsigned char v) { return atomic_add_narrow(p, v); }
// atomic max/min: native on 32/64-bit integers; floats (NaN-quiet like fmaxf) and narrow types by CAS
__device__ __forceinline__ int atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ int atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned int atomic_max(unsigned int* p, unsigned int v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned int atomic_min(unsigned int* p, unsigned int v) { return atomicMin(p, v); }
__device__ __forceinline__ long atomic_max(long* p, long v) {
  return (long)atomicMax(reinterpret_cast<long long*>(p), (long long)v);
}
__device__ __forceinline__ long atomic_min(long* p, long v) {
  return (long)atomicMin(reinterpret_cast<long long*>(p), (long long)v);
}
__device__ __forceinline__ float atomic_max(float* p, float v) { return atomic_update(p, [v](float x) { return fmaxf(x, v); }); }
__device__ __forceinline__ float atomic_min(float* p, float v) { return atomic_update(p, [v](float x) { return fminf(x, v); }); }
__device__ __forceinline__ half atomic_max(half* p, half v) { return atomic_update(p, [v](half x) { return __hmax(x, v); }); }
__device__ __forceinline__ half atomic_min(half* p, half v) { return atomic_update(p, [v](half x) { return __hmin(x, v); }); }
__device__ __forceinline__ __nv_bfloat16 atomic_max(__nv_bfloat16* p, __nv_bfloat16 v) {
  return atomic_update(p, [v](__nv_bfloat16 x) { return __hmax(x, v); });
}
__device__ __forceinline__ __nv_bfloat16 atomic_min(__nv_bfloat16* p, __nv_bfloat16 v) {
  return atomic_update(p, [v](__nv_bfloat16 x) { return __hmin(x, v); });
}
template <typename I>
__device__ __forceinline__ I atomic_max(I* p, I v) { return atomic_update(p, [v](I x) { return x < v ? v : x; }); }
template <typename I>
__device__ __forceinline__ I atomic_min(I* p, I v) { return atomic_update(p, [v](I x) { return v < x ? v : x; }); }
__device__ __forceinline__ int atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ __forceinline__ unsigned int atomic_or(unsigned int* p, unsigned int v) { return atomicOr(p, v); }
__device__ __forceinline__ long atomic_or(long* p, long v) {
  return (long)atomicOr(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v);
}
template <typename I>
__device__ __forceinline__ I atomic_or(I* p, I v) { return atomic_update(p, [v](I x) { return static_cast<I>(x | v); }); }
}  // namespace tl
// ---- end of tilelang_core device library ------------------------------------------------
"""


def insert_prelude(cuda_source: str, extra: str = "") -> str:
    """Put the device library (and this kernel's extra device functions) before the first kernel."""
    marker = 'extern "C" __global__'
    at = cuda_source.find(marker)
    if at < 0:
        return PRELUDE + extra + cuda_source
    return cuda_source[:at] + PRELUDE + extra + "\n" + cuda_source[at:]


def swizzle_chunk_text(row: str, chunk: str, chunks_per_row: int) -> str:
    """TVMScript text of the swizzled 16-byte chunk index (mirrors tl::swz_chunk)."""
    if chunks_per_row >= 8:
        return f"T.bitwise_xor({chunk}, T.bitwise_and({row}, 7))"
    if chunks_per_row == 4:
        return f"T.bitwise_xor({chunk}, T.bitwise_and(T.shift_right({row}, 1), 3))"
    if chunks_per_row == 2:
        return f"T.bitwise_xor({chunk}, T.bitwise_and(T.shift_right({row}, 2), 1))"
    return chunk


def swizzled_index(kind: str, cols: int, elem_bytes: int, idx: list[str]) -> list[str]:
    """Physical index (TVMScript text) of element `idx` of a shared tile laid out as `kind` (plan.shared_layouts):
    "rows" XOR-swizzles the 16-byte chunks of each row; "atoms" stores the tile as [cols/w][rows][w] (w: 128 bytes of
    elements, 64 of fp16, 128 of fp8) with the 128-byte swizzle (mirrors tl::off16 and the wgmma descriptors)."""
    epc, w = 16 // elem_bytes, 128 // elem_bytes
    row, col = idx[-2], idx[-1]
    if kind == "atoms":
        chunk = swizzle_chunk_text(row, f"T.floordiv(T.floormod({col}, {w}), {epc})", 8)
        return idx[:-2] + [f"T.floordiv({col}, {w})", row, f"({chunk} * {epc} + T.floormod({col}, {epc}))"]
    chunk = swizzle_chunk_text(row, f"T.floordiv({col}, {epc})", cols // epc)
    return idx[:-1] + [f"({chunk} * {epc} + T.floormod({col}, {epc}))"]
