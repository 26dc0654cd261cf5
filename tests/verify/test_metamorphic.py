"""`verify --metamorphic`: a correct tiled kernel gives the same result at other tile / stage / thread
configurations and keeps each output row to its own input rows; the silent bugs under oracle_cases/bugs/ (no
reference function) are found, named by parameter and region, and the clean kernels and examples get nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "oracle_cases"


def _kernel(path: Path):
    from tilelang_core.check import check_source

    (func,) = check_source(path.read_text(), str(path)).kernels
    return func


def test_one_knob_changes_at_a_time_block_sizes_first():
    from tilelang_core.verify.metamorphic import knobs, variants

    func = _kernel(ROOT / "examples/gemm.py")
    assert knobs(func) == {"block_M": 128, "block_N": 128, "block_K": 32, "num_stages": 3}
    assert [v.label() for v in variants(func, None)] == ["block_M=64", "block_M=256", "block_N=64", "block_N=256",
                                                          "block_K=16", "block_K=64", "num_stages=1"]


def test_autotune_configs_are_preferred_when_the_factory_has_them():
    from types import SimpleNamespace

    from tilelang_core.verify.metamorphic import variants

    func = _kernel(ROOT / "examples/gemm.py")
    factory = SimpleNamespace(configs=[{"block_M": 128, "block_N": 128, "block_K": 32, "num_stages": 3},
                                       {"block_M": 64, "block_N": 128, "block_K": 32, "num_stages": 2},
                                       {"block_M": 64, "unknown_knob": 1}])
    assert [(v.label(), v.origin) for v in variants(func, factory)] == [("block_M=64, num_stages=2",
                                                                         "autotune config")]


def test_the_row_dimension_of_each_tensor_comes_from_its_annotation():
    from tilelang_core.verify.metamorphic import row_axes

    path = ROOT / "examples/gemm.py"
    assert row_axes(_kernel(path), path.read_text()) == {"A": "M", "B": "K", "C": "M"}
    decode = CASES / "clean/paged_decode.py"
    assert row_axes(_kernel(decode), decode.read_text())["Out"] == "batch"


def _meta(path: Path) -> dict:
    from tilelang_core.runtime.user_file import load_module
    from tilelang_core.verify.child import metamorphic_instance
    from tilelang_core.verify.contract import InputContract

    text = path.read_text()
    glb = load_module(str(path))
    return metamorphic_instance(_kernel(path), glb, text, InputContract(glb, text))


def _line(path: Path, marker: str) -> int:
    return next(k for k, ln in enumerate(path.read_text().splitlines(), 1) if marker in ln)


@pytest.mark.tvm
def test_a_k_loop_counted_in_m_tiles_changes_with_block_m_and_block_k():
    path = CASES / "bugs/gemm_k_loop_counts_m_tiles.py"
    meta = _meta(path)
    (f,) = [f for f in meta["findings"] if f["code"] == "metamorphic-config-mismatch"]
    assert "block_M 64 -> 32 (varied)" in f["message"] and "block_K 32 -> 16 (varied)" in f["message"]
    assert "output 'C' depends on the tile configuration" in f["message"] and "within C[" in f["message"]
    assert f["line"] == _line(path, "T.Pipelined(T.ceildiv(K, block_M)")  # attribution.py: the loop's coverage
    assert meta["configs"][:3] == ["block_M=32", "block_N=32", "block_K=16"]


@pytest.mark.tvm
def test_a_v_tile_offset_in_query_tiles_is_a_coincidence_at_its_line():
    path = CASES / "bugs/attention_v_tile_uses_block_m.py"
    meta = _meta(path)
    assert [(f["code"], f["line"]) for f in meta["findings"]] == [
        ("metamorphic-config-coincidence", _line(path, "T.copy(V[bz, by, k * block_M, 0], V_shared)"))]
    assert "changing block_M from 64 to 32" in meta["findings"][0]["message"]


@pytest.mark.tvm
def test_swapped_block_indices_leak_rows_and_are_a_coincidence_at_the_store():
    path = CASES / "bugs/gemm_swapped_block_index.py"
    meta = _meta(path)
    store = _line(path, "T.copy(C_local, C[bx * block_M, by * block_N])")
    assert {(f["code"], f["line"]) for f in meta["findings"]} == {("metamorphic-config-coincidence", store),
                                                                  ("metamorphic-row-leak", store)}
    assert meta["rows"] == "rows 128..159 of A"


@pytest.mark.tvm
@pytest.mark.parametrize("path", [ROOT / "examples/gemm.py", CASES / "clean/paged_decode.py"],
                         ids=lambda p: p.name)
def test_clean_kernels_have_no_finding(path):
    meta = _meta(path)
    assert meta["findings"] == [] and meta["configs"], meta


def _pair(path: Path, base: dict, other: dict):
    """The IR of a bug case's kernel at two configurations (static, no build)."""
    from tilelang_core.check import check_source

    text = path.read_text()
    factory = check_source(text, str(path)).kernels[0].factory
    (a,) = check_source(text, str(path), instances={factory: [base]}).kernels
    (b,) = check_source(text, str(path), instances={factory: [{**base, **other}]}).kernels
    return a, b


@pytest.mark.parametrize("name,base,other,marker,words", [
    ("causal_mask_query_offset.py", dict(batch=1, heads=2, seq_len=128, dim=64, is_causal=True), {"block_M": 32},
     "bx * block_N + i >=", "`bx` is scaled by 64 here at the other configuration but by 32 everywhere else"),
    ("gemm_k_loop_counts_m_tiles.py", dict(M=128, N=128, K=256), {"block_M": 32},
     "T.Pipelined(T.ceildiv(K, block_M)", "the `ko` loop covers 128 of the 256 elements"),
    ("rmsnorm_first_row_scale.py", dict(M=128, N=512), {"block_M": 16},
     "* inv_rms[0] *", "inv_rms[0] reads one element of axis 0 for every iteration"),
    ("gemm_prefetch_into_read_stage.py", dict(M=128, N=128, K=256), {"block_K": 16},
     "A_shared[k % 2, :, :])", "fetches a later iteration's tile into stage k % 2 of A_shared"),
])
def test_the_suspect_statement_is_the_buggy_line(name, base, other, marker, words):
    from tilelang_core.verify.attribution import suspects

    path = CASES / "bugs" / name
    found = suspects(*_pair(path, base, other))
    assert found and found[0].span.line == _line(path, marker) and words in found[0].reason, found


@pytest.mark.parametrize("path,base,other", [
    (ROOT / "examples/flash_attention.py", dict(batch=1, heads=2, seq_len=128, dim=64, is_causal=True),
     {"block_M": 32}),
    (ROOT / "examples/gemm.py", dict(M=256, N=256, K=256), {"block_K": 16}),
    (ROOT / "examples/rmsnorm.py", dict(M=128, N=512), {"block_M": 16}),
], ids=lambda x: getattr(x, "name", None))
def test_correct_kernels_have_no_suspect(path, base, other):
    from tilelang_core.verify.attribution import suspects

    assert suspects(*_pair(path, base, other)) == []
