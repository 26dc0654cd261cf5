"""Kernel sources shared by the CPU and CUDA tests of runtime `while` loops."""

PERSISTENT = """
import tilelang.language as T

@T.prim_func
def persistent_gemm(A: T.Tensor((256, 128), T.float16), B: T.Tensor((128, 256), T.float16),
                    C: T.Tensor((256, 256), T.float32)):
    with T.Kernel(3, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), T.float16)
        B_s = T.alloc_shared((32, 64), T.float16)
        C_l = T.alloc_fragment((64, 64), T.float32)
        tile = T.alloc_var(T.int32)
        tile = bx
        while tile < 16:
            tm = tile // 4
            tn = tile % 4
            T.clear(C_l)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[tm * 64, k * 32], A_s)
                T.copy(B[k * 32, tn * 64], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[tm * 64, tn * 64])
            tile += 3
"""
