"""verify honours a kernel's input contract: integer tensors used as indices (page tables, lengths) get the values
the file's main() passes, a `# tilelsp: inputs(...)` comment's, or values inside the ranges the kernel's indexing
implies, never blind random integers (which gave a correct paged KV-cache write a false block race); a finding on
a table-driven write names the table and points at the line that reads it."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
CASES = Path(__file__).resolve().parent / "oracle_cases"


def _kernel(path: Path, text: str | None = None):
    from tilelang_core.check import check_source

    (func,) = check_source(text or path.read_text(), str(path)).kernels
    return func


def _limits(func) -> dict:
    from tilelang_core.verify.index_uses import index_uses

    out: dict = {}
    for u in index_uses(func):
        low, limit, scatter = out.get(u.param.name, (0, 1 << 30, False))
        out[u.param.name] = (max(low, u.low), min(limit, u.limit), scatter or u.scatter)
    return out


def test_the_ranges_come_from_what_each_table_addresses():
    decode = _limits(_kernel(CASES / "clean/paged_decode.py"))
    # block_table picks one of num_pages=32 pages; cache_seqlens counts pages of 32 tokens over max_pages=8 entries
    assert decode == {"block_table": (0, 32, False), "cache_seqlens": (1, 257, False)}
    write = _limits(_kernel(CASES / "clean/paged_kv_write.py"))
    assert write == {"block_table": (0, 16, True)}  # it addresses the written cache: a scatter


def test_cumulative_offsets_are_recognised_and_drawn_sorted():
    from tilelang_core.runtime.kernel import KernelParam
    from tilelang_core.verify.contract import InputContract
    from tilelang_core.verify.index_uses import offset_tables

    func = _kernel(CASES / "clean/varlen_mean_pool.py")
    assert [p.name for p in offset_tables(func)] == ["cu_seqlens"]
    kernel = type("K", (), {"func": func, "params": [KernelParam(p.name, p.dtype, (), False)
                                                     for p in func.params[:2]]})()
    args = [torch.zeros(64, 128), torch.zeros(5, dtype=torch.int32)]
    sources = InputContract({}, "").apply(kernel, args, {})
    values = args[1].tolist()
    assert values == sorted(values) and values[0] == 0 and max(values) < 64
    assert sources == {"cu_seqlens": "values in 0..63, sorted (cumulative offsets), from how the kernel indexes "
                                     "with it"}


def test_a_table_used_only_as_data_is_left_alone():
    from tilelang_core.verify.index_uses import index_uses

    text = (CASES / "clean/paged_kv_write.py").read_text().replace("K_cache[page, 0, 0]", "K_cache[bx, 0, 0]")
    assert index_uses(_kernel(CASES / "clean/paged_kv_write.py", text)) == []


def test_hint_comments_are_read_per_name():
    from tilelang_core.verify.contract import hint_exprs

    text = "x = 1\n# tilelsp: inputs(block_table=torch.arange(8).reshape(2, 4), lens=range(1, 9))\n"
    assert hint_exprs(text) == {"block_table": "torch.arange(8).reshape(2, 4)", "lens": "range(1, 9)"}


def _run(path: Path, sanitize: bool = True) -> dict:
    from tilelang_core.verify.child import run

    records: list = []
    run({"file": str(path), "kernel": None, "device": "cpu", "bench": False, "sanitize": sanitize}, records.append)
    (rec,) = records
    return rec


@pytest.mark.tvm
def test_random_integers_gave_the_paged_write_a_false_race():
    from tilelang_core.runtime.jit import compile
    from tilelang_core.verify.child import random_inputs
    from tilelang_core.verify.contract import InputContract
    from tilelang_core.verify.sanitize import sanitize_kernel

    func = _kernel(CASES / "clean/paged_kv_write.py")
    kernel = compile(func, target="cpu")
    blind = sanitize_kernel(kernel, random_inputs(kernel))
    assert [d.code for d in blind] == ["sanitize-block-race"]  # what verify --sanitize reported before
    args = random_inputs(kernel)
    sources = InputContract({}, "").apply(kernel, args, dict(func.bindings))
    assert sources == {"block_table": "values in 0..15, distinct, from how the kernel indexes with it"}
    assert sorted(args[1].flatten().tolist()) == sorted(set(args[1].flatten().tolist()))
    assert sanitize_kernel(kernel, args, sources) == []


@pytest.mark.tvm
@pytest.mark.parametrize("name", ["paged_kv_write", "paged_decode"])
def test_the_clean_paged_kernels_pass_on_the_tables_their_main_builds(name):
    rec = _run(CASES / f"clean/{name}.py")
    assert rec["passed"] and rec["sanitizer"] == [], rec
    assert set(rec["inputs"].values()) == {"what main() passes"}


@pytest.mark.tvm
def test_a_hint_comment_wins_over_main(tmp_path):
    text = (CASES / "clean/paged_kv_write.py").read_text()
    hinted = tmp_path / "hinted.py"
    hinted.write_text(text + "# tilelsp: inputs(block_table=torch.arange(8, dtype=torch.int32).reshape(2, 4))\n")
    rec = _run(hinted)
    assert rec["passed"] and rec["inputs"] == {"block_table": "the `# tilelsp: inputs(block_table=...)` comment"}
    bad = tmp_path / "bad_hint.py"
    bad.write_text(text + "# tilelsp: inputs(block_table=torch.arange(3))\n")
    rec = _run(bad)
    assert not rec["passed"] and "gives shape (3,) but the kernel's 'block_table' has shape (2, 4)" in rec["message"]


@pytest.mark.tvm
def test_a_write_that_drops_the_batch_row_of_the_table_is_a_race_naming_the_table():
    path = CASES / "bugs/paged_write_missing_batch_row.py"
    lines = path.read_text().splitlines()
    rec = _run(path)
    (f,) = rec["sanitizer"]
    write = next(k for k, ln in enumerate(lines, 1) if "T.copy(K_shared, K_cache" in ln)
    read = next(k for k, ln in enumerate(lines, 1) if "= block_table[" in ln)
    assert (f["code"], f["line"]) == ("sanitize-block-race", read)  # the cause: the index read from the table
    assert f"comes from block_table (read at line {read}; values: what main() passes)" in f["message"]
    assert "index K_cache with the block indices" not in f["message"]  # the stock advice does not fit a gather
    assert f["related"][0]["line"] == write


RUNTIME_ARGS = '''
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale_rows(M, N, block_M=32):
    @T.prim_func
    def scale(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                Y[bx * block_M + i, j] = X[bx * block_M + i, j] * 2.0

    return scale


def ref_program(X):
    return X * 2


def main():
    x = torch.randn(96, 64)
    rows, cols = x.shape  # the factory's arguments exist only when main() runs
    print(scale_rows(rows, cols)(x).sum())
'''


@pytest.mark.tvm
def test_factory_arguments_computed_in_main_come_from_running_it_up_to_the_call(tmp_path):
    path = tmp_path / "runtime_args.py"
    path.write_text(RUNTIME_ARGS)
    rec = _run(path, sanitize=False)
    assert rec["passed"] and rec["message"] == "matches the reference", rec
    path.write_text(RUNTIME_ARGS.replace("def main():", "def main(device):"))  # needs an argument: not run
    rec = _run(path, sanitize=False)
    assert not rec["passed"] and "factory argument(s) M, N of scale_rows are not known statically" in rec["message"]
