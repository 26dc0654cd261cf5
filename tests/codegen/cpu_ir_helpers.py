"""Hand-built tile-IR kernels for the CPU backend tests (independent of the frontend)."""
from __future__ import annotations

from tilelang_core.ir import nodes as N


def C(v, dt="int32"):
    return N.Const(v, dt)


def add(a, b):
    return N.BinOp("+", a, b)


def mul(a, b):
    return N.BinOp("*", a, b)


def full(buf):
    return N.Region(buf, tuple(N.Axis(C(0), d) for d in buf.shape), "full")


def tile(buf, *axes):
    """Region from (start, extent) pairs; an int start with extent None is a point index."""
    out = []
    for start, ext in axes:
        start = start if not isinstance(start, int) else C(start)
        out.append(N.Axis(start, C(1) if ext is None else (C(ext) if isinstance(ext, int) else ext), ext is not None))
    return N.Region(buf, tuple(out), "slice")


def gemm_kernel(M, N_, K, bm=32, bn=32, bk=16, dtype="float32", acc="float32", trans_b=False, stages=2):
    """The classic TileLang GEMM: C = A @ B (or A @ B.T), tile sizes bm x bn x bk."""
    A = N.Buffer("A", (C(M), C(K)), dtype)
    B = N.Buffer("B", (C(N_), C(K)) if trans_b else (C(K), C(N_)), dtype)
    Cb = N.Buffer("C", (C(M), C(N_)), dtype)
    bx, by = N.Var("bx", kind="block"), N.Var("by", kind="block")
    ko = N.Var("ko")
    As = N.Buffer("A_shared", (C(bm), C(bk)), dtype, "shared.dyn")
    Bs = N.Buffer("B_shared", (C(bn), C(bk)) if trans_b else (C(bk), C(bn)), dtype, "shared.dyn")
    Cl = N.Buffer("C_local", (C(bm), C(bn)), acc, "local.fragment")
    b_src = (tile(B, (mul(bx, C(bn)), bn), (mul(ko, C(bk)), bk)) if trans_b
             else tile(B, (mul(ko, C(bk)), bk), (mul(bx, C(bn)), bn)))
    loop = N.For((ko,), (C(0),), (C(-(-K // bk)),), "pipelined", N.SeqStmt((
        N.Copy(tile(A, (mul(by, C(bm)), bm), (mul(ko, C(bk)), bk)), full(As)),
        N.Copy(b_src, full(Bs)),
        N.Gemm(full(As), full(Bs), full(Cl), transpose_b=trans_b),
    )), num_stages=stages)
    body = N.SeqStmt((
        N.Allocate(As), N.Allocate(Bs), N.Allocate(Cl),
        N.Fill(full(Cl), C(0), is_clear=True),
        loop,
        N.Copy(full(Cl), tile(Cb, (mul(by, C(bm)), bm), (mul(bx, C(bn)), bn))),
    ))
    launch = N.Launch((C(-(-N_ // bn)), C(-(-M // bm))), (C(128),), (bx, by), body)
    return N.PrimFunc("gemm", (A, B, Cb), N.SeqStmt((launch,)), out_idx=(-1,))
