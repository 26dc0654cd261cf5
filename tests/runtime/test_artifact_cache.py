"""Artifact cache: round trip, corruption is rebuilt never trusted, concurrent writers, cache directory."""
from __future__ import annotations

import json
import multiprocessing

import pytest

from tilelang_core.runtime.artifact import Artifact, arch_flags
from tilelang_core.runtime.cache import ArtifactCache, cache_dir, sha256

SOURCE = 'extern "C" __global__ void k_kernel(float* A_ptr) { A_ptr[threadIdx.x] = 1.0f; }\n'
CUBIN = b"\x7fELF" + bytes(range(256)) * 8


def _meta(source=SOURCE, arch="sm_90a", nvcc="Build cuda_13.0"):
    return {"name": "k", "arch": arch, "nvcc_version": nvcc, "content_hash": sha256(source, arch, nvcc)}


def _paths(cache, key):
    base = cache.root / key[:2] / key
    return base.with_suffix(".json"), base.with_suffix(".cu"), base.with_suffix(".cubin")


def test_round_trip(tmp_path):
    cache = ArtifactCache(tmp_path)
    cache.put("ab" * 32, _meta(), SOURCE, CUBIN)
    meta, source, cubin = cache.get("ab" * 32)
    assert source == SOURCE and cubin == CUBIN and meta["cubin_size"] == len(CUBIN)
    assert cache.get("cd" * 32) is None


@pytest.mark.parametrize("damage", ["bad_json", "edited_source", "truncated_cubin", "missing_cubin", "not_a_dict"])
def test_corrupt_entries_are_misses_and_removed(tmp_path, damage):
    cache, key = ArtifactCache(tmp_path), "ef" * 32
    cache.put(key, _meta(), SOURCE, CUBIN)
    meta_p, cu_p, bin_p = _paths(cache, key)
    if damage == "bad_json":
        meta_p.write_text("{not json")
    elif damage == "edited_source":
        cu_p.write_text(SOURCE.replace("1.0f", "2.0f"))
    elif damage == "truncated_cubin":
        bin_p.write_bytes(CUBIN[:100])
    elif damage == "missing_cubin":
        bin_p.unlink()
    else:
        meta_p.write_text(json.dumps([1, 2]))
    assert cache.get(key) is None
    assert not meta_p.exists()
    cache.put(key, _meta(), SOURCE, CUBIN)  # rebuilt entry is trusted again
    assert cache.get(key)[2] == CUBIN


def _writer(root, key, n):
    cache = ArtifactCache(root)
    for _ in range(n):
        cache.put(key, _meta(), SOURCE, CUBIN)
        got = cache.get(key)
        assert got is None or got[2] == CUBIN


def test_concurrent_writers_leave_a_valid_entry(tmp_path):
    key = "12" * 32
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), key, 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert ArtifactCache(tmp_path).get(key)[2] == CUBIN
    leftovers = [p for p in (tmp_path / key[:2]).iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("TILELSP_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "a"
    monkeypatch.delenv("TILELSP_CACHE_DIR")
    assert cache_dir() == tmp_path / "x" / "tilelsp"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tilelsp"


def test_artifact_save_load_and_grid(tmp_path):
    art = Artifact("k", "k_kernel", "sm_80", SOURCE, CUBIN, ["T.ceildiv(M, 128)", 4], [128, 1, 1], 0,
                   [{"name": "M", "kind": "dim", "dtype": "int32", "shape": [], "is_output": False}],
                   content_hash=sha256(SOURCE, "sm_80", ""))
    back = Artifact.load(art.save(tmp_path))
    assert back.cubin == CUBIN and back.source == SOURCE
    assert back.grid_for({"M": 300}) == (3, 4, 1)


def test_sm90a_uses_gencode():
    assert arch_flags("sm_90a") == ["-gencode=arch=compute_90a,code=sm_90a"]
    assert arch_flags("sm_80") == ["-arch=sm_80"]
