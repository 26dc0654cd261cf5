"""Fragment layouts: every element has exactly one owner, row layouts agree with their tiles, inference."""
from __future__ import annotations

import pytest

from tilelang_core import check_source
from tilelang_core.passes.layout_kinds import Generic, Mma, MmaRow, Replicated
from tilelang_core.passes.layouts import LayoutError, describe, infer_layouts, warp_partition
from tests.conftest import EXAMPLES


def _owners(layout, threads):
    seen = {}
    for tx in range(threads):
        for r in range(layout.regs):
            coords = tuple(eval(c, {}, {"tx": tx, "r": r}) for c in layout.coords("tx", "r"))
            seen.setdefault(coords, []).append((tx, r))
    return seen


@pytest.mark.parametrize("m,n,wm,wn", [(64, 64, 4, 1), (128, 128, 2, 2), (32, 16, 1, 2)])
def test_mma_layout_is_a_bijection(m, n, wm, wn):
    lay = Mma(m, n, wm, wn)
    owners = _owners(lay, wm * wn * 32)
    assert sorted(owners) == [(i, j) for i in range(m) for j in range(n)]
    assert all(len(v) == 1 for v in owners.values())


def test_mma_rows_match_the_tile_rows():
    tile = Mma(64, 32, 4, 1)
    rows = MmaRow.of(tile)
    for tx in range(128):
        for r in range(tile.regs):
            i = eval(tile.coords("tx", "r")[0], {}, {"tx": tx, "r": r})
            rr = eval(rows.reg_from_parent(tile, "r"), {}, {"r": r})
            assert eval(rows.coords("tx", "rr")[0], {}, {"tx": tx, "rr": rr}) == i


def test_generic_layout_covers_a_ragged_tile():
    lay = Generic((3, 50), 128)
    owners = {}
    for tx in range(128):
        for r in range(lay.regs):
            if r * 128 + tx < lay.size:
                owners[tuple(eval(c, {}, {"tx": tx, "r": r}) for c in lay.coords("tx", "r"))] = tx
    assert len(owners) == 150 and not lay.exact


def test_warp_partition_policies():
    assert warp_partition("FullRow", 128, 64, 4) == (4, 1)
    assert warp_partition("FullCol", 64, 128, 4) == (1, 4)
    assert warp_partition("Square", 128, 128, 4) == (2, 2)
    with pytest.raises(LayoutError):
        warp_partition("Square", 8, 8, 4)


def _kernel(name: str, idx: int = 0):
    path = EXAMPLES / name
    return check_source(path.read_text(), str(path)).kernels[idx]


def test_flash_attention_layouts_are_inferred_from_the_gemms():
    k = _kernel("flash_attention.py")
    lays = {b.name: lay for b, lay in infer_layouts(k, 128).items()}
    assert lays["scores"] == lays["acc_o"] == lays["probs"] == Mma(64, 64, 4, 1)
    for row in ("m_new", "m_old", "rescale", "tile_sum", "denom"):
        assert lays[row] == MmaRow(64, 4, 1)


def test_softmax_rows_are_replicated_next_to_a_generic_tile():
    k = _kernel("softmax.py")
    lays = {b.name: lay for b, lay in infer_layouts(k, 128).items()}
    assert lays["x"] == Generic((8, 256), 128, vec=2)  # runs of 2: one vector per thread for the copies
    assert lays["row_max"] == Replicated((8,))
    assert "replicated 8 (8 regs/thread)" in describe(infer_layouts(k, 128))
