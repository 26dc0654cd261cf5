"""The hazards in-order CPU execution hides (cross-block reads, pipelined prefetches, concurrent roles, unwaited
cp.async copies): each bug case is flagged at its `# bug` line, the clean kernels get none of these codes."""
from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_core.check import check_source

CASES = Path(__file__).parent / "hazard_cases"
HAZARD_CODES = {"cross-block-read", "pipeline-prefetch-hazard", "role-race", "async-copy-unwaited"}
EXPECTED = {
    "partials_summed_by_last_block.py": ("cross-block-read", "warning"),
    "blur_reads_neighbour_tile.py": ("cross-block-read", "warning"),
    "splitk_activation_after_atomic.py": ("cross-block-read", "warning"),
    "chunk_state_through_global.py": ("pipeline-prefetch-hazard", "warning"),
    "paged_copy_index_var.py": ("pipeline-prefetch-hazard", "warning"),
    "hand_specialised_gemm_no_barrier.py": ("role-race", "error"),
    "ws_consumer_waits_late.py": ("role-race", "warning"),
    "cp_async_read_before_wait.py": ("async-copy-unwaited", "warning"),
}


def _check(path: Path):
    return check_source(path.read_text(), str(path))


def test_every_bug_case_has_an_expectation():
    assert sorted(p.name for p in (CASES / "bugs").glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bug_is_flagged_at_its_line(name):
    path = CASES / "bugs" / name
    code, severity = EXPECTED[name]
    lines = [i + 1 for i, t in enumerate(path.read_text().splitlines()) if "# bug" in t]
    found = [d for d in _check(path).diagnostics if d.code == code]
    assert found, f"{name}: no {code}"
    assert {d.span.line for d in found} <= set(lines), [(d.span.line, d.message) for d in found]
    assert found[0].severity.value == severity and found[0].message


@pytest.mark.parametrize("path", sorted((CASES / "clean").glob("*.py")), ids=lambda p: p.name)
def test_clean_kernel_has_no_hazard(path):
    result = _check(path)
    assert not [d for d in result.diagnostics if d.code in HAZARD_CODES or d.is_error], result.diagnostics


def test_a_role_race_needs_disjoint_roles_and_overlapping_tiles():
    src = (CASES / "bugs" / "hand_specialised_gemm_no_barrier.py").read_text()
    same_role = src.replace("                else:\n", "                if tx < 64:\n")
    assert not [d for d in check_source(same_role).diagnostics if d.code == "role-race"]


def test_a_one_stage_pipeline_prefetches_nothing():
    src = (CASES / "bugs" / "chunk_state_through_global.py").read_text().replace("num_stages=2", "num_stages=1")
    assert not [d for d in check_source(src).diagnostics if d.code == "pipeline-prefetch-hazard"]


def test_sync_grid_orders_the_blocks():
    src = (CASES / "bugs" / "partials_summed_by_last_block.py").read_text()
    guard = "            if bx == n_blocks - 1:\n"
    fixed = src.replace(guard, "            T.sync_grid()\n" + guard)
    assert fixed != src
    assert not [d for d in check_source(fixed).diagnostics if d.code == "cross-block-read"]
