"""Clusters of two blocks for the persistent warp-specialised GEMM (codegen/cuda/cluster.py): what the schedule
emits (compile-time cluster dims, multicast of the shared operand's atoms split between the blocks, stage releases in
both blocks, cluster barriers), the launch metadata, each reason a kernel keeps its blocks alone, and nvcc."""
from __future__ import annotations

import re
import shutil

import pytest

from tests.codegen.ptxas import ptxas_report
from tests.codegen.test_cuda_persistent import _gemm, _schedule
from tilelang_core.codegen.cuda import generate
from tilelang_core.codegen.cuda.cluster import tile_coords

pytestmark = pytest.mark.tvm

SWIZZLED = dict(prologue="T.use_swizzle(4)\n            T.clear(C_local)")


@pytest.fixture
def clusters(monkeypatch):
    monkeypatch.setenv("TILELSP_CLUSTER", "2")


def test_pairs_of_tiles_sharing_b_multicast_it(clusters):
    ck = generate(_gemm(SWIZZLED), "sm_90a")  # 2 x 4 tiles, panels of 4 tile rows: tiles 2q, 2q+1 keep bx
    src = ck.source
    assert ck.cluster == 2 and ck.persistent and ck.grid == (8,)
    assert src.count("__cluster_dims__(2, 1, 1) __launch_bounds__(384, 1) main_kernel(") == 2  # declared, defined
    # B_shared's four 64-column atoms: the first two issued by block 0, the last two by block 1, into both blocks
    assert src.count("tl::tma_load_mc_2d<0>(B_tmap1") == 2 and src.count("tl::tma_load_mc_2d<1>(B_tmap1") == 2
    assert src.count("tl::tma_load_2d(A_tmap0") == 1  # each block's own A rows
    assert ".multicast::cluster" in src and "mbarrier::complete_tx::bytes" in src
    assert "tl::mbar_arrive_pair(" in src and "tl::mbar_arrive((" not in src
    # .release.cluster would put a MEMBAR.ALL.GPU before every k-step's arrival (1.4x slower on the H200)
    assert "mbarrier.arrive.shared::cluster.b64 _, [a]" in src and "arrive.release.cluster" not in src
    # one arrival per consumer warp and block (lanes 0 and 1), not 128 remote arrivals per block and k-step
    assert "setp.lt.u32 p, l, 2" in src and "@p mbarrier.arrive.shared::cluster" in src
    inits = re.findall(r"tl::mbar_init\(\(&\(\(\(uint64_t\*\)smem_ptr\)\[\d+\]\)\), (\d+)\)", src)
    assert sorted(set(inits)) == ["1", "16"], inits  # full: the producer; empty: 8 warps x 2 blocks
    assert src.count("tl::cluster_sync();") == 2  # after the barrier setup, before exit
    assert "(tl::grid_blocks() / 2)" in src  # the tile loop walks pairs


def test_the_layouts_stage_says_what_was_chosen(clusters):
    text = _schedule(_gemm(SWIZZLED))
    assert "# cluster 2x1: tiles 2q, 2q+1 keep bx; B_shared (4 atoms) multicast" in text


def test_the_launch_metadata_carries_the_cluster_size(clusters, tmp_path):
    from dataclasses import replace

    from tilelang_core.runtime.artifact import Artifact, from_kernel

    func = _gemm(SWIZZLED)
    art = from_kernel(generate(func, "sm_90a"), func, "sm_90a", b"")
    step = Artifact.load(art.save(tmp_path)).launch_plan()[0]  # what the GPU machine reads
    assert step["cluster"] == 2 and step["persistent"]
    assert "cluster" not in replace(art, cluster=1).launch_plan()[0]


REFUSALS = [  # (body change, kernel args, environment, reason)
    (SWIZZLED, {}, {"TILELSP_CLUSTER": None}, "TILELSP_CLUSTER=0 (2 turns clusters on)"),
    (SWIZZLED, {}, {"TILELSP_PERSISTENT": "0"}, "not persistent"),
    (SWIZZLED, dict(M=384, N=256), {}, "an odd number of tiles (3)"),
    ({}, {}, {}, "the shared tile A_shared has 1 atom(s), which do not split between two blocks"),
    (dict(prologue="T.use_swizzle(3)\n            T.clear(C_local)"), {}, {},
     "tiles 2q and 2q+1 of the rasterised order do not share a block index"),
]


@pytest.mark.parametrize("body,kw,env,reason", REFUSALS,
                         ids=["off", "not-persistent", "odd-tiles", "atoms", "pairs-straddle"])
def test_each_refusal_keeps_blocks_alone_and_says_why(monkeypatch, body, kw, env, reason):
    monkeypatch.setenv("TILELSP_CLUSTER", "2")
    for name, value in env.items():
        monkeypatch.delenv(name) if value is None else monkeypatch.setenv(name, value)
    func = _gemm(body, **kw)
    assert f"# blocks alone: {reason}" in _schedule(func)
    ck = generate(func, "sm_90a")
    assert ck.cluster == 1 and "__cluster_dims__" not in ck.source and "tl::cluster_sync" not in ck.source


def test_the_launcher_starts_whole_resident_clusters():
    from tilelang_core.runtime.launch import whole_clusters

    assert whole_clusters(132, 2, 66) == 132 and whole_clusters(512, 2, 60) == 120  # one wave of resident clusters
    assert whole_clusters(131, 2) == 130 and whole_clusters(1, 2) == 2  # the driver could not say: whole clusters


def test_tile_coords_follow_the_rasterised_order():
    class Hint:
        panel_size, order = 3, "row"

    # panels of 3 tile rows, swept column by column; the last panel holds the remaining row
    assert [tile_coords(i, 2, 4, Hint) for i in range(8)] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2),
                                                              (0, 3), (1, 3)]
    assert [tile_coords(i, 2, 2, None) for i in range(4)] == [(0, 0), (1, 0), (0, 1), (1, 1)]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_the_cluster_gemm_compiles_for_sm90a_without_spills(clusters):
    ck = generate(_gemm(SWIZZLED, dtype="bfloat16"), "sm_90a")
    assert ck.cluster == 2
    stderr = ptxas_report(ck.source)
    assert "warning" not in stderr.lower() and "C7514" not in stderr
    assert "0 bytes spill stores" in stderr and "0 bytes stack frame" in stderr
