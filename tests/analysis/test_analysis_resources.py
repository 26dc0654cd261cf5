"""Shared memory (with stages), threads and register estimates on hand-built IR, per target."""
from __future__ import annotations

from analysis_irb import alloc, buf, codes, full, kernel, load, loop, mul, run, sl, sp, store, var
from tilelang_core.ir import nodes as N

A = buf("A", (4096, 4096), scope="global")
B = buf("B", (4096, 4096), scope="global")


def _pipelined_gemm(bm, bn, bk, stages, threads=128, extra=()):
    As, Bs = buf("A_shared", (bm, bk)), buf("B_shared", (bk, bn))
    C = buf("C_local", (bm, bn), "float32", "local.fragment")
    k = var("k")
    body = loop(k, 4096 // bk, [
        N.Copy(sl(A, (0, bm), (mul(k, bk), bk)), full(As), sp()),
        N.Copy(sl(B, (mul(k, bk), bk), (0, bn)), full(Bs), sp()),
        N.Gemm(full(As), full(Bs), full(C), span=sp()),
    ], kind="pipelined", num_stages=stages)
    return kernel([alloc(As), alloc(Bs), alloc(C), *extra, body], threads=(threads,), params=(A, B))


def test_smem_counts_stages_and_reports_breakdown():
    f = _pipelined_gemm(256, 128, 128, 4)  # (256*128 + 128*128) * 2 B = 96 KiB per stage, x4 = 384 KiB
    diags, facts = run(f)
    d = [x for x in diags if x.code == "shared-memory-exceeded"][0]
    assert "393216 B" in d.message and "sm_90a" in d.message and "× 4 stages" in d.message
    assert d.data["max_stages_that_fit"] == 2 and d.data["num_stages"] == 4 and d.target == "sm_90a"
    assert len(d.related) == 2
    k = facts.kernels[0]
    assert k.smem_bytes["sm_90a"] == 393216 and k.smem_limit["sm_90a"] == 232448
    assert ("A_shared", 65536, 4) in k.smem_breakdown


def test_smem_fits_then_one_diag_per_overflowing_target():
    f = _pipelined_gemm(128, 128, 32, 3)  # 16 KiB * 3 = 48 KiB
    assert codes(f, ("sm_90a", "sm_80", "sm_86")) == []
    f = _pipelined_gemm(128, 128, 64, 4)  # 32 KiB * 4 = 128 KiB: over sm_86 / sm_89 (99), fits sm_80 (163)
    diags, _ = run(f, ("sm_90a", "sm_80", "sm_86", "sm_89"))
    assert sorted(d.target for d in diags if d.code == "shared-memory-exceeded") == ["sm_86", "sm_89"]


def test_smem_unpipelined_buffer_counts_once():
    big = buf("S", (256, 256))  # 128 KiB, used before the loop and read after it: live throughout
    i = var("i")
    f = _pipelined_gemm(128, 128, 64, 2, extra=(alloc(big), store(big, (0, 0))))  # 64 KiB + 128 KiB = 192 KiB
    f = _append(f, loop(i, 8, [store(big, (i, 1), load(big, i, 0))]))
    assert codes(f) == []
    diags, _ = run(f, ("sm_80",))
    d = next(d for d in diags if d.code == "shared-memory-exceeded")
    assert d.data["max_stages_that_fit"] == 1


def test_smem_buffers_used_one_after_another_share_memory():
    epilogue = buf("C_shared", (256, 256))  # 128 KiB, only used after the main loop
    f = _pipelined_gemm(128, 128, 64, 2, extra=(alloc(epilogue),))  # loop buffers: 64 KiB
    f = _append(f, store(epilogue, (0, 0)))
    _, facts = run(f, ("sm_80",))
    assert facts.kernels[0].smem_bytes["sm_80"] == 131072
    assert codes(f, ("sm_80",)) == []


def _append(func, stmt):
    launch = func.body.stmts[0]
    body = N.SeqStmt(launch.body.stmts + (stmt,))
    launch = N.Launch(launch.grid, launch.threads, launch.block_vars, body, launch.span)
    return N.PrimFunc(func.name, func.params, N.SeqStmt((launch,)), span=func.span, name_span=func.name_span)


def test_symbolic_smem_is_not_checked():
    m = var("block_M", "symbolic")
    S = buf("S", (m, 65536))
    assert codes(kernel([alloc(S)])) == []


def test_threads():
    assert codes(_pipelined_gemm(64, 64, 32, 2, threads=2048)) == ["threads-exceeded"]
    assert codes(_pipelined_gemm(64, 64, 32, 2, threads=100)) == ["threads-not-warp-multiple"]
    assert codes(kernel([], threads=(32, 4))) == []
    assert codes(kernel([], threads=(1,))) == []
    assert codes(kernel([], threads=(2, 2, 128))) == ["threads-exceeded"]
    assert codes(kernel([], threads=(128, 2, 2))) == []
    assert codes(kernel([], threads=(64, 32))) == ["threads-exceeded"]


def test_register_estimate():
    C = buf("C_local", (256, 256), "float32", "local.fragment")
    diags, facts = run(kernel([alloc(C)], threads=(128,)))
    assert [d.code for d in diags] == ["register-pressure"]
    assert "512 registers" in diags[0].message
    assert facts.kernels[0].registers == 512
    _, facts = run(kernel([alloc(buf("C", (128, 128), "float32", "local.fragment"))], threads=(128,)))
    assert facts.kernels[0].registers == 128


def test_grid_limits():
    assert codes(kernel([], grid=(2**31 - 1, 65535, 65535))) == []
    assert codes(kernel([], grid=(4, 65536))) == ["grid-exceeded"]
    assert codes(kernel([], grid=(2**31, 1))) == ["grid-exceeded"]
    assert codes(kernel([], grid=(4, var("n", "symbolic")))) == []
