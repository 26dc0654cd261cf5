"""Layout views (features/layout_*.py) of examples/gemm.py: the maps, from the codegen's plan, and their pictures."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tilelang_core.check import check_source
from tilelsp.features.layout_maps import FragmentMap, SharedMap, gemm_notes, kernel_maps, shared_map
from tilelsp.features.layout_svg import buffer_svg, colour
from tilelsp.features.layout_text import buffer_png, buffer_text
from tilelsp.features.layout_view import layout_request, maps_for

from tests.conftest import EXAMPLES


def _kernel(name: str = "gemm.py"):
    path = EXAMPLES / name
    return check_source(path.read_text(), str(path), ("sm_90a",)).kernels[0]


@pytest.fixture(scope="module")
def gemm():
    return _kernel()


def _maps(func, arch) -> dict:
    return {m.name: m for m in kernel_maps(func, arch)}


def test_wgmma_accumulator_rows_belong_to_warps_in_bands_of_16(gemm):
    c = _maps(gemm, "sm_90a")["C_local"]
    assert isinstance(c, FragmentMap) and c.kind == "wgmma accumulator" and c.grid == (128, 128)
    assert all(len(o) == 1 for o in c.owners)  # one owner per element
    for row in range(128):
        assert {o[0][0] // 32 for o in c.owners[row * 128:(row + 1) * 128]} == {row // 16 % 4}
    # the m16n8 atom inside: lane 4t+q holds columns 2q, 2q+1 of row t (registers 0, 1), row t+8 in registers 2, 3
    assert c.owners[0][0] == (0, 0) and c.owners[1][0] == (0, 1) and c.owners[2][0] == (1, 0)
    assert c.owners[1 * 128][0] == (4, 0) and c.owners[8 * 128][0] == (0, 2)


def test_mma_sync_accumulator_splits_warps_2x2(gemm):
    c = _maps(gemm, "sm_80")["C_local"]
    assert c.kind == "mma.sync accumulator" and "warps 2x2" in c.layout
    warp = lambda i, j: c.owners[i * 128 + j][0][0] // 32  # noqa: E731
    assert (warp(0, 0), warp(0, 64), warp(64, 0), warp(127, 127)) == (0, 1, 2, 3)
    assert c.owners[0][0] == (0, 0) and c.owners[2][0] == (1, 0) and c.owners[8 * 128][0] == (0, 2)


def test_swizzled_shared_tiles_are_conflict_free_and_plain_ones_are_not(gemm):
    maps = _maps(gemm, "sm_80")
    a = maps["A_shared"]
    assert isinstance(a, SharedMap) and a.swizzle == "rows" and "(row >> 1) & 3" in a.swizzle_name
    assert sorted(a.offsets) == list(range(128 * 32))  # a permutation of the tile
    assert [p.conflicts for p in a.patterns] == [0, 0] and "ldmatrix A" in a.patterns[1].name
    assert a.banks[:32:8] == [0, 4, 8, 12] and a.banks[2 * 32:2 * 32 + 32:8] == [4, 0, 12, 8]
    # the same tile unswizzled: rows of 64 bytes, so ldmatrix's 8 rows hit the same banks every 2 rows: 4-way
    func = gemm
    from tilelang_core.codegen.cuda.kernel_plan import plan
    from tilelang_core.ir import nodes as N
    from tilelang_core.ir.visitor import walk

    _, threads, layouts, _, _, wgmma = plan(func, "sm_80")
    gemms = [g for g in walk(func.body) if isinstance(g, N.Gemm)]
    plain = shared_map(gemms[0].a.buffer, None, threads, gemms, layouts, wgmma)
    ld = plain.patterns[1]
    assert ld.worst == 4 and ld.wavefronts == 4 * ld.ideal and ld.conflicts == 3 * ld.ideal
    b = _maps(gemm, "sm_90a")["B_shared"]
    assert b.swizzle == "atoms" and [p.conflicts for p in b.patterns] == [0, 0]
    assert "wgmma B core matrices" in b.patterns[1].name


def test_row_vectors_and_replication_of_flash_attention():
    maps = _maps(_kernel("flash_attention.py"), "sm_80")
    rows = [m for m in maps.values() if isinstance(m, FragmentMap) and m.kind == "mma rows"]
    assert rows, [m.kind for m in maps.values() if isinstance(m, FragmentMap)]
    for m in rows:  # each row held by the 4 lanes of a quad (times the warps that split N)
        assert m.grid[1] == 1 and min(len(o) for o in m.owners) >= 4


def test_gemm_notes_name_the_instruction_warps_and_swizzles(gemm):
    hopper, = gemm_notes(gemm, "sm_90a")
    assert (hopper["m"], hopper["n"], hopper["k"]) == (128, 128, 32)
    assert hopper["instruction"].startswith("wgmma.mma_async m64n128k16")
    assert "128-byte swizzle" in hopper["swizzle"]["B"]
    ampere, = gemm_notes(gemm, "sm_80")
    assert ampere["instruction"].startswith("mma.sync m16n8k16") and "2x2 warps" in ampere["warps"]


def test_fp8_tiles_are_128_column_atoms_and_the_note_names_wgmma_k32():
    fp8 = _kernel("gemm_fp8.py")
    a = _maps(fp8, "sm_90a")["A_shared"]
    assert a.swizzle == "atoms" and sorted(a.offsets) == list(range(128 * 128))
    # one 128-byte atom per row: row 0 is stored in order, row 1 has its 16-byte chunks swapped in pairs
    assert a.offsets[:128] == list(range(128)) and a.offsets[128:144] == list(range(144, 160))
    assert [p.conflicts for p in a.patterns] == [0, 0]
    note, = gemm_notes(fp8, "sm_90a")
    assert note["instruction"].startswith("wgmma.mma_async m64n256k32") and note["k"] == 128


def test_svg_text_and_png(gemm):
    for m in kernel_maps(gemm, "sm_80"):
        root = ET.fromstring(buffer_svg(m))  # well-formed
        legend = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if "legend-cell" in e.get("class", "")]
        assert legend and legend[0].get("fill") == colour(0)
        text = buffer_text(m)
        assert text.startswith(m.name)
    c = maps_for(gemm, "sm_80", "C_local")[0]
    grid = buffer_text(c).splitlines()
    assert grid[5].split()[1][:64] == "0" * 64 and grid[5].split()[1][64:] == "1" * 64
    pytest.importorskip("matplotlib")
    assert buffer_png(c)[:8] == b"\x89PNG\r\n\x1a\n"


def test_worker_request_and_errors(gemm):
    text = (EXAMPLES / "gemm.py").read_text()
    res = layout_request({"target": "sm_90a", "buffer": "B_shared"}, [gemm])
    assert [b["name"] for b in res["buffers"]] == ["B_shared"] and "<svg" in res["html"]
    assert "Content-Security-Policy" in res["html"] and "<script" not in res["html"]
    with pytest.raises(LookupError, match="A_shared, B_shared, C_local"):
        maps_for(gemm, "sm_90a", "nope")
    with pytest.raises(LookupError, match="CUDA target"):
        maps_for(gemm, "cpu")
    assert text  # the example itself is untouched
