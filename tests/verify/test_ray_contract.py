"""`verify --ray` feeds a kernel the inputs a local verify does: index tables from the file's input contract (its
main()'s tables, a hint, or the ranges the kernel's indexing implies), not random integers; the Ray tasks'
functions (prepare on a CPU worker, run on a device worker) give the local verify's record."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm
CASES = Path(__file__).resolve().parent / "oracle_cases"
KEYS = ("kernel", "instance", "passed", "max_abs_err", "max_rel_err", "message", "inputs")


def _remote(path: Path) -> tuple[dict, dict]:
    from tilelsp.cluster import verify_tasks as ray_verify

    prepared = ray_verify.prepare_instance(path.name, path.read_text(), None, 0, "cpu")
    return prepared, ray_verify.run_instance(prepared, "cpu", False)


def _local(path: Path) -> dict:
    from tilelang_core.verify.child import run

    records: list = []
    run({"file": str(path), "kernel": None, "device": "cpu", "bench": False, "sanitize": False}, records.append)
    (rec,) = records
    return rec


@pytest.mark.parametrize("name", ["paged_decode", "paged_kv_write"])
def test_the_tables_main_builds_travel_to_the_device_worker(name):
    path = CASES / "clean" / f"{name}.py"
    prepared, remote = _remote(path)
    local = _local(path)
    assert {k: remote.get(k) for k in KEYS} == {k: local.get(k) for k in KEYS}
    assert remote["passed"] and set(remote["inputs"].values()) == {"what main() passes"}


def test_without_main_the_tables_come_from_the_kernels_ranges(tmp_path):
    text = (CASES / "clean" / "paged_kv_write.py").read_text()
    path = tmp_path / "paged_kv_write_no_main.py"
    path.write_text(text.replace("def main(", "def _unused_main(").replace("if __name__", "if False and __name__")
                    + "\n# tilelsp: paged_kv_write(batch=2, seqlen=64, dim=64, num_pages=16)\n")
    prepared, remote = _remote(path)
    table = prepared["args"][1]
    assert table.dtype == torch.int32 and sorted(table.flatten().tolist()) == sorted(set(table.flatten().tolist()))
    assert 0 <= int(table.min()) and int(table.max()) < 16  # a scatter over the 16 pages: distinct, in range
    local = _local(path)
    assert {k: remote.get(k) for k in KEYS} == {k: local.get(k) for k in KEYS}
    assert remote["inputs"] == {"block_table": "values in 0..15, distinct, from how the kernel indexes with it"}
