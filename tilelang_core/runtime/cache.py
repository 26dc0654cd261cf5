"""On-disk kernel artifact cache: atomic writes, integrity checks, safe under concurrent writers.

Layout: <dir>/<key[:2]>/<key>.json (metadata, written last: it commits the entry), .cu and .cubin (CUDA), or
.ll and .so (the CPU backend's LLVM IR and shared library). A corrupt entry (bad JSON, hash mismatch, truncated cubin) is reported as a miss and rebuilt.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """TILELSP_CACHE_DIR, else $XDG_CACHE_HOME/tilelsp, else ~/.cache/tilelsp."""
    env = os.environ.get("TILELSP_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "tilelsp" if xdg else Path.home() / ".cache" / "tilelsp"


def sha256(*parts) -> str:
    """Hex sha256 over str/bytes parts (length-prefixed, so part boundaries matter)."""
    h = hashlib.sha256()
    for p in parts:
        b = p if isinstance(p, bytes) else str(p).encode()
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class ArtifactCache:
    """Maps a key to (metadata dict, source text, binary bytes): CUDA source and cubin by default."""

    def __init__(self, root: str | Path | None = None, source_suffix: str = ".cu", binary_suffix: str = ".cubin"):
        self.root = Path(root) if root is not None else cache_dir()
        self.suffixes = (source_suffix, binary_suffix)

    def _paths(self, key: str) -> tuple[Path, Path, Path]:
        base = self.root / key[:2] / key
        return base.with_suffix(".json"), base.with_suffix(self.suffixes[0]), base.with_suffix(self.suffixes[1])

    def binary_path(self, key: str) -> Path:
        """Where an entry's binary lives (a CPU library is loaded from there)."""
        return self._paths(key)[2]

    def get(self, key: str):
        """(meta, source, cubin) for a valid entry, else None (corrupt entries are removed)."""
        meta_p, cu_p, bin_p = self._paths(key)
        try:
            meta = json.loads(meta_p.read_text())
            source = cu_p.read_text()
            cubin = bin_p.read_bytes()
        except (OSError, ValueError, UnicodeDecodeError):
            if meta_p.exists():
                self.remove(key)
            return None
        if not isinstance(meta, dict) or not self._valid(meta, source, cubin):
            self.remove(key)
            return None
        return meta, source, cubin

    @staticmethod
    def _valid(meta: dict, source: str, cubin: bytes) -> bool:
        if meta.get("content_hash") != sha256(source, meta.get("arch"), meta.get("nvcc_version")):
            return False
        return meta.get("cubin_sha256") == hashlib.sha256(cubin).hexdigest() and len(cubin) == meta.get("cubin_size")

    def put(self, key: str, meta: dict, source: str, cubin: bytes) -> None:
        """Store an entry; the metadata file is written last, so readers never see half an entry. Nothing is stored
        while the checks tolerate errors (a sanitized run): a cache hit skips the checks."""
        from ..lowering import tolerated_areas

        if tolerated_areas():
            return
        meta = dict(meta, cubin_sha256=hashlib.sha256(cubin).hexdigest(), cubin_size=len(cubin))
        meta_p, cu_p, bin_p = self._paths(key)
        atomic_write(cu_p, source.encode())
        atomic_write(bin_p, cubin)
        atomic_write(meta_p, json.dumps(meta, indent=1, sort_keys=True).encode())

    def remove(self, key: str) -> None:
        """Drop an entry (missing files are fine)."""
        for p in self._paths(key):
            try:
                p.unlink()
            except OSError:
                pass
