"""`tilelsp ir`'s stage texts kept between runs, keyed by content: the kernel instance's tile IR (spans included),
target, codegen options and compiler version (`runtime.artifact.ir_key`) plus the stage, in the runtime's cache
folder (`runtime.cache`: TILELSP_CACHE_DIR, else ~/.cache/tilelsp) under ir/. Best effort: an unreadable,
corrupt or unwritable entry is a miss."""
from __future__ import annotations

import json

from tilelang_core.runtime.artifact import ir_key
from tilelang_core.runtime.cache import atomic_write, cache_dir, sha256


def stage_key(func, target: str, stage: str) -> str:
    """The cache key of one stage of one kernel instance for `target` (a canonical target name)."""
    return sha256("tilelsp-ir", ir_key(func, target), stage)


def _path(key: str):
    return cache_dir() / "ir" / key[:2] / f"{key}.json"


def load(key: str) -> str | None:
    """The stored text, or None (no entry, or one that fails its digest)."""
    try:
        entry = json.loads(_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    text = entry.get("text") if isinstance(entry, dict) else None
    return text if isinstance(text, str) and entry.get("sha256") == sha256(text) else None


def store(key: str, text: str) -> None:
    """Keep `text` under `key` (atomically; a folder that cannot be written is skipped)."""
    try:
        atomic_write(_path(key), json.dumps({"sha256": sha256(text), "text": text}).encode())
    except OSError:
        pass
