"""The persistent tile loop (codegen/cuda/persistent.py) and the TMA-store epilogue (codegen/cuda/tma_store.py) of the
warp-specialised sm_90a pipeline: what they emit, the schedule the IR stages print, each reason a kernel keeps one
block per tile or the register epilogue, and the paths they leave alone (sm_80, the CPU backend)."""
from __future__ import annotations

import re
import shutil

import pytest

from tilelang_core import check_source, lower
from tilelang_core.codegen.cuda import generate
from tilelang_core.codegen.cuda.records import FrameDeclarations, RoleState
from tests.conftest import ROOT
from tests.codegen.ptxas import ptxas_report

pytestmark = pytest.mark.tvm

HEAD = "import tilelang\nimport tilelang.language as T\n\n\n"
GEMM = HEAD + """@tilelang.jit
def gemm(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            {prologue}
            for ko in T.Pipelined({trips}, num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            {epilogue}

    return main
"""
PLAIN = dict(prologue="T.clear(C_local)", trips="T.ceildiv(K, block_K)",
             epilogue="T.copy(C_local, C[by * block_M, bx * block_N])")
SIZE = dict(M=512, N=512, K=256)


def _kernel(source: str, factory: str, **kw):
    res = check_source(source, "k.py", instances={factory: [kw]})
    assert not res.errors, [d.message for d in res.errors]
    return next(k for k in res.kernels if k.factory == factory)


def _gemm(body=None, **kw):
    return _kernel(GEMM.format(**dict(PLAIN, **(body or {}))), "gemm", **dict(SIZE, **kw))


def _schedule(func) -> str:
    return lower(func, "sm_90a", until="layouts").stages["layouts"]


@pytest.fixture(scope="module")
def gemm():
    return generate(_gemm(), "sm_90a")


def test_a_qualifying_gemm_loops_over_its_tiles_and_stores_through_tma(gemm):
    src = gemm.source
    assert gemm.persistent and gemm.grid == (8,)  # 2 x 4 tiles; the launcher caps the grid at the resident blocks
    assert "tl::grid_blocks()" in src and "for (int tile_i = 0;" in src
    # the stage ring continues across tiles: stage and phase count from the tile's first iteration
    assert "((tile_i * 4) + ko_i) % 3" in src
    # four 64-column atoms of the 128x256 tile, in the whole-tile loop and in a stream-K finisher piece
    assert src.count("tl::tma_store_2d(C_tmap2") == 2 * 4
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in src and "tl::bulk_commit();" in src
    assert "tl::bulk_wait_read<0>();" in src and "tl::bulk_wait<0>();" in src
    assert "*(half2*)(C_ptr + " not in src  # the registers no longer store C themselves
    maps = {m["tensor"]: m for m in gemm.tensor_maps}
    assert maps["C"]["box"] == [64, 64] and maps["C"]["swizzle"] == 128  # each warpgroup stores its 64 rows
    assert "tl::warpgroup_sync();" in src and "((((int)threadIdx.x) >> 7) * 64)" in src
    # 3 stages of 128x64 + 64x256 fp16 tiles and 6 mbarriers (to 1024 bytes), then the 128x256 staging tile
    assert gemm.smem_bytes == 148480 + 128 * 256 * 2


def test_the_ir_stages_show_the_tile_loop_and_the_epilogue():
    text = _schedule(_gemm())
    assert "# persistent: min(8, resident blocks) blocks loop over 8 tiles" in text
    assert "# epilogue: C_local -> C through a 128x256 shared staging tile, TMA store box [64, 64] x4 (swizzle 128), " \
        "each consumer warpgroup storing its 64-row bands" in text
    lowered = lower(_gemm(), "sm_90a", until="lowered").stages["lowered"]
    assert 'pblock = T.launch_thread("blockIdx.x", 8)' in lowered and "for tile_i in T.serial(" in lowered


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("kw", [dict(), dict(block_N=128, threads=128, num_stages=4), dict(dtype="bfloat16"),
                                dict(num_stages=4, dtype="bfloat16")],
                         ids=["128x256", "one-consumer-in-flight", "bf16", "staging-ring"])
def test_the_persistent_tma_store_gemm_compiles_for_sm90a_without_warnings(kw):
    ck = generate(_gemm(**kw), "sm_90a")
    assert ck.persistent and "tl::tma_store_2d(" in ck.source
    stderr = ptxas_report(ck.source)
    assert "warning" not in stderr.lower() and "C7514" not in stderr and "C7508" not in stderr


def test_one_consumer_warpgroup_in_flight_releases_the_last_stage_for_the_next_tile():
    src = generate(_gemm(block_N=128, threads=128, num_stages=4), "sm_90a").source
    # after the last wgmma group: the stage of iteration n-1, which the loop itself never releases
    assert re.search(r"tl::wgmma_wait_fenced<0, 128>\(.*\);\s*tl::mbar_arrive\(", src)


REFUSALS = [  # (body change, kernel args, persistent reason, TMA store reason or None when it still applies)
    (dict(epilogue="T.atomic_add(C[by * block_M, bx * block_N], C_local)"), {},
     "atomics", "no single accumulator-to-global copy"),
    (dict(prologue="T.copy(C[by * block_M, bx * block_N], C_local)"), {},
     "reads the tensor it writes (C)", "'C' is read or written elsewhere"),
    (dict(trips="T.ceildiv(K, block_K) - by"), {}, "trip count depends on the block index", None),
    (dict(prologue="T.clear(C_local)\n            n = T.ceildiv(K, block_K) - by", trips="n"), {},
     "trip count depends on the block index", None),
    (dict(epilogue="C_s = T.alloc_shared((block_M, block_N), dtype)\n            T.copy(C_local, C_s)\n"
                   "            T.copy(C_s, C[by * block_M, bx * block_N])"), {},
     "shared memory used outside the pipelined loop", "no single accumulator-to-global copy"),
    ({}, dict(num_stages=4, smem_limit=210000), None, "does not fit beside the stages (11280 bytes left of 210000)"),
]


@pytest.mark.parametrize("body,kw,persistent,store", REFUSALS,
                         ids=["atomics", "read-write", "tile-trips", "tile-trips-let", "shared-epilogue", "smem-budget"])
def test_each_refusal_keeps_the_old_path_and_says_why(body, kw, persistent, store, monkeypatch):
    import dataclasses

    from tilelang_core.target import ARCHS

    limit = kw.pop("smem_limit", None)
    func = _gemm(body, **kw)
    if limit:  # a device with less shared memory: 4 stages fit, not even one 128x64 staging atom beside them
        monkeypatch.setitem(ARCHS, "sm_90a", dataclasses.replace(ARCHS["sm_90a"], smem_per_block=limit))
    text = _schedule(func)
    assert "warp-specialised ko" in text
    ck = generate(func, "sm_90a")
    if persistent is None:
        assert "# persistent:" in text and ck.persistent
    else:
        assert "# one block per tile: " in text and persistent in text
        assert not ck.persistent and ck.grid == (2, 4) and "tl::grid_blocks" not in ck.source
    if store is None:
        assert "# epilogue: C_local -> C" in text and "tl::tma_store_2d(" in ck.source
    else:
        assert "# epilogue from registers: " in text and store in text
        assert "tl::tma_store_2d(" not in ck.source


def test_a_deeper_pipeline_stages_the_epilogue_through_a_ring_of_atoms():
    """4 stages of 128x64 + 64x256 fp16 tiles leave room for two of the four 128x64 atoms: each atom is written,
    stored and committed alone, and a slot is written again once the store two groups back has read it; each consumer
    warpgroup writes, stores and waits for its own 64-row band of each atom behind its own barrier."""
    func = _gemm(num_stages=4)
    assert "# epilogue: C_local -> C through a ring of 2 shared 128x64 staging slots, TMA store box [64, 64] x4 " \
        "(swizzle 128), each consumer warpgroup storing its 64-row bands" in _schedule(func)
    ck = generate(func, "sm_90a")
    src = ck.source
    # per epilogue (whole tiles, stream-K finisher pieces): four stores, commits and waits, each by a warpgroup's first
    assert ck.persistent and src.count("tl::tma_store_2d(C_tmap2") == 2 * 4 and src.count("tl::bulk_commit();") == 8
    assert src.count("tl::bulk_wait_read<1>();") == 2 * 4 and "tl::bulk_wait_read<0>();" not in src
    assert src.count("if ((((int)threadIdx.x) % 128) == 0) {") == 2 * 4 * 2 + 1  # waits and stores; the drain
    epilogue = src[src.index("tl::bulk_wait_read<1>();"):src.index("tl::bulk_commit();")]
    assert "tl::warpgroup_sync();" in epilogue and "__syncthreads" not in epilogue  # warpgroup barriers only
    assert ck.smem_bytes == 4 * (128 * 64 + 64 * 256) * 2 + 1024 + 2 * 128 * 64 * 2
    stores = re.findall(r"tl::tma_store_2d\(C_tmap2, \(&\(\(\(half\*\)smem_ptr\)\["
                        r"\(\(\(\(\(int\)threadIdx.x\) >> 7\) \* 4096\) \+ (\d+)\)\]\)\)", src)
    assert len(stores) == 8 and len(set(stores)) == 2 and stores[:2] == stores[2:4]  # atoms 0, 2 share a slot; 1, 3


def test_without_warpgroup_epilogues_the_ring_is_stored_by_one_thread(monkeypatch):
    monkeypatch.setenv("TILELSP_WG_EPILOGUE", "0")
    func = _gemm(num_stages=4)
    assert "# epilogue: C_local -> C through a ring of 2 shared 128x64 staging slots, TMA store box [128, 64] x4 " \
        "(swizzle 128)\n" in _schedule(func)
    src = generate(func, "sm_90a").source
    assert src.count("tl::tma_store_2d(C_tmap2") == 2 * 4 and "% 128) == 0" not in src


@pytest.mark.parametrize("m,n,wm,interleave,inner", [(128, 256, 8, True, 64), (256, 128, 8, True, 64),
                                                     (128, 128, 4, False, 64), (64, 128, 4, True, 32)])
def test_the_ring_writes_every_accumulator_element_once_into_its_own_atom(m, n, wm, interleave, inner):
    from types import SimpleNamespace

    from tilelang_core.codegen.cuda.tma_store import atom_pairs
    from tilelang_core.passes.layout_kinds import Mma

    lay = Mma(m, n, wm, 1, interleave=interleave)
    stub = {"T": SimpleNamespace(floordiv=lambda a, b: a // b, floormod=lambda a, b: a % b)}
    seen = {}
    for atom in range(n // inner):
        trips, pair = atom_pairs(lay, inner, atom, "r")
        for tx in range(wm * 32):
            for r in range(trips):
                p = eval(pair, stub, {"r": r})  # noqa: S307 - the emitted index text
                for e in range(2):
                    i, j = (eval(c, {}, {"tx": tx}) for c in lay.coords("tx", str(p * 2 + e)))  # noqa: S307
                    assert j // inner == atom
                    seen[i, j] = seen.get((i, j), 0) + 1
    assert len(seen) == m * n and set(seen.values()) == {1}


def test_rows_tma_cannot_store_keep_the_register_epilogue():
    """An fp8 GEMM with N = 132: B (N x K) loads through TMA, but C's bf16 rows are 264 bytes (not 16-byte steps)."""
    path = ROOT / "benchmarks" / "gpu_hopper_kernels.py"
    kw = dict(M=200, N=132, K=208, block_M=128, block_N=128, block_K=128, num_stages=3, threads=128, panel=1)
    func = _kernel(path.read_text(), "hopper_fp8_matmul", **kw)
    assert "the tensor's rows are not 16-byte multiples" in _schedule(func)
    ck = generate(func, "sm_90a")
    assert ck.persistent and "tl::tma_store_2d(" not in ck.source and {m["tensor"] for m in ck.tensor_maps} == {"A", "B"}


@pytest.mark.parametrize("switch,needle", [("TILELSP_PERSISTENT", "one block per tile: TILELSP_PERSISTENT=0"),
                                           ("TILELSP_TMA_STORE", "epilogue from registers: TILELSP_TMA_STORE=0")])
def test_the_switches_turn_each_off(monkeypatch, switch, needle):
    monkeypatch.setenv(switch, "0")
    func = _gemm()
    assert needle in _schedule(func)
    ck = generate(func, "sm_90a")
    assert ck.persistent == (switch != "TILELSP_PERSISTENT")
    assert ("*(half2*)(C_ptr + " in ck.source) == (switch == "TILELSP_TMA_STORE")


def test_sm80_keeps_one_block_per_tile_and_the_register_epilogue():
    ck = generate(_gemm(), "sm_80")
    assert not ck.persistent and ck.grid == (2, 4) and "tl::grid_blocks" not in ck.source
    assert "tma_store" not in ck.source and "*(half2*)(C_ptr + " in ck.source


def test_the_artifact_carries_the_persistent_launch(gemm):
    from tilelang_core.runtime.artifact import from_kernel

    art = from_kernel(gemm, _gemm(), "sm_90a", b"")
    step = art.launch_plan()[0]
    assert step["persistent"] and art.grid_for({}, step["grid"]) == (8, 1, 1)


BATCHED = HEAD + """@tilelang.jit
def bgemm(M, N, K, block_M=128, block_N=256, block_K=64, dtype=T.float16):
    B = T.dynamic("b")

    @T.prim_func
    def main(A: T.Tensor((B, M, K), dtype), W: T.Tensor((B, K, N), dtype), C: T.Tensor((B, M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), B, threads=256) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            W_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.use_swizzle(4)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[bz, by * block_M, ko * block_K], A_shared)
                T.copy(W[bz, ko * block_K, bx * block_N], W_shared)
                T.gemm(A_shared, W_shared, C_local)
            T.copy(C_local, C[bz, by * block_M, bx * block_N])

    return main
"""


def test_a_batched_gemm_with_a_dynamic_batch_counts_its_tiles_at_launch():
    from tilelang_core.runtime.artifact import from_kernel

    func = _kernel(BATCHED, "bgemm", M=1000, N=512, K=256)
    ck = generate(func, "sm_90a")
    assert ck.persistent and ck.grid == ("(2) * (8) * (b)",)
    assert from_kernel(ck, func, "sm_90a", b"").grid_for({"b": 3}, ck.grid) == (48, 1, 1)
    lowered = lower(func, "sm_90a", until="lowered").stages["lowered"]
    assert "blk[2] = T.floordiv(tile, (2 * 8))" in lowered  # the batch index, then the swizzled tile in its slice
    assert [m["box"] for m in ck.tensor_maps if m["tensor"] == "C"] == [[64, 64, 1]]


@pytest.mark.usefixtures("tilelang_alias")
def test_the_cpu_backend_ignores_the_switches(monkeypatch):
    import runpy

    torch = pytest.importorskip("torch")
    glb = runpy.run_path(str(ROOT / "benchmarks" / "gpu_hopper_kernels.py"), run_name="hopper_kernels")
    a, b = torch.randn(96, 80, dtype=torch.float16), torch.randn(80, 72, dtype=torch.float16)
    outs = []
    for value in ("1", "0"):
        monkeypatch.setenv("TILELSP_PERSISTENT", value)
        monkeypatch.setenv("TILELSP_TMA_STORE", value)
        kernel = glb["hopper_matmul"](96, 72, 80, 64, 64, 32, 2, 128, 2)
        outs.append(kernel(a, b))
    ref = (a.float() @ b.float()).half()
    torch.testing.assert_close(outs[0], ref, rtol=1e-2, atol=1e-2)
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize("prologue,order", [
    ("T.clear(C_local)", "panels of 16 tile rows, the default without T.use_swizzle"),
    ("T.use_swizzle(8, enable=False)\n            T.clear(C_local)", "T.use_swizzle order"),  # asked for none
    ("T.use_swizzle(4)\n            T.clear(C_local)", "T.use_swizzle order")])
def test_a_persistent_gemm_without_use_swizzle_walks_panels_shaped_for_a_wave(prologue, order):
    assert f"({order})" in _schedule(_gemm(dict(PLAIN, prologue=prologue), M=4096, N=4096, K=512))
    assert "panels of 12 tile rows" in _schedule(_gemm(M=4096, N=4096, K=512, block_N=128, threads=128))


class _Var:
    def __init__(self, name):
        self.name = name


class _Emitter:
    """What raster.rasterize reads and writes on the kernel emitter."""

    def __init__(self, panel):
        self.lines, self.var_text, self.frame = [], {}, FrameDeclarations()
        self.roles = RoleState(type("WS", (), {"persistent": type("P", (), {"panel": panel})})())

    def idx(self, e):
        return str(e)

    def name(self, v):
        return v.name

    def fresh(self, base):
        return base

    def line(self, text):
        self.lines.append(text)


@pytest.mark.parametrize("gx,gy,panel", [(16, 32, 16), (8, 8, 16), (18, 18, 12), (5, 37, 6), (1, 9, 2)])
def test_the_default_panel_order_visits_every_tile_once(gx, gy, panel):
    from types import SimpleNamespace

    from tilelang_core.codegen.cuda.raster import rasterize
    from tilelang_core.ir import nodes as N

    em = _Emitter(panel)
    launch = SimpleNamespace(block_vars=[_Var("bx"), _Var("by")], grid=[gx, gy], body=N.SeqStmt(()))
    rasterize(em, launch, "t")
    stub = {"T": SimpleNamespace(floordiv=lambda a, b: a // b, floormod=lambda a, b: a % b, min=min)}
    seen = []
    for t in range(gx * gy):
        blk = [0, 0, 0]
        for text in em.lines:
            slot, value = re.fullmatch(r"blk\[(\d)\] = (.*)", text).groups()
            blk[int(slot)] = eval(value, stub, {"t": t, "blk": blk})  # noqa: S307 - the emitted index text
        seen.append((blk[0], blk[1]))
    assert sorted(seen) == [(x, y) for x in range(gx) for y in range(gy)]
    assert len({y for _, y in seen[:min(panel, gy)]}) == min(panel, gy)  # the first tiles go down one panel


@pytest.mark.parametrize("m,n", [(128, 256), (256, 128)])
def test_each_consumer_warpgroup_writes_and_stores_only_its_own_bands(m, n):
    from types import SimpleNamespace

    from tilelang_core.codegen.cuda.tma_store import _bands
    from tilelang_core.passes.layout_kinds import Mma

    func = _gemm(block_M=m, block_N=n)
    lay = Mma(m, n, 8, 1, interleave=True)
    assert lay.describe() in _schedule(func)  # the accumulator layout the kernel has
    band = _bands(lay, 256)
    ck_stores = generate(func, "sm_90a").source.count("tl::tma_store_2d(C_tmap2")
    assert band == 64 and ck_stores == 2 * (n // 64) * (m // 128)  # data-parallel + stream-K: atoms x own bands
    stub = {"T": SimpleNamespace(floordiv=lambda a, b: a // b, floormod=lambda a, b: a % b)}
    for tx in range(256):
        for r in range(lay.regs):
            i = eval(lay.coords("tx", "r")[0], stub, {"tx": tx, "r": r})  # noqa: S307 - the layout's index text
            assert i % (2 * band) // band == tx // 128  # row band b * 128 + 64 g .. + 64 is warpgroup g's


def test_the_switch_keeps_one_store_thread_for_both_warpgroups(monkeypatch):
    monkeypatch.setenv("TILELSP_WG_EPILOGUE", "0")
    ck = generate(_gemm(), "sm_90a")
    assert [m["box"] for m in ck.tensor_maps if m["tensor"] == "C"] == [[64, 128]]
    assert "tl::warpgroup_sync" not in ck.source.split("void __launch_bounds__")[-1]
