"""`[tool.tilelsp]` settings from the nearest pyproject.toml, validated, and the known target and code names.

Keys: `targets` (list of arch names), `select`, `ignore` (lists of diagnostic codes), `exclude` (glob
patterns relative to the pyproject.toml's folder). A malformed table raises `ConfigError` naming the key.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

KEYS = ("targets", "select", "ignore", "exclude")


class ConfigError(Exception):
    """A usage problem in flags or in `[tool.tilelsp]` (exit status 2)."""


@dataclass(frozen=True)
class Config:
    """Settings for the files under one folder; `path` is the pyproject.toml they came from (or None)."""

    root: Path
    path: Path | None = None
    targets: tuple[str, ...] | None = None
    select: frozenset[str] | None = None
    ignore: frozenset[str] = field(default_factory=frozenset)
    exclude: tuple[str, ...] = ()

    def excludes(self, file: Path, start: Path | None = None) -> bool:
        """True when `file`, or a folder between it and `start` (a PATH named by the user), matches an `exclude` glob.

        Globs match paths relative to `root`, or a bare file/folder name; `start` and folders above it never match.
        """
        if not self.exclude:
            return False
        root = self.root.resolve()
        try:
            parts = file.resolve().relative_to(root).parts
        except ValueError:
            return False
        skip = _depth_below(start, root)
        candidates = {"/".join(parts[: i + 1]) for i in range(skip, len(parts))} | set(parts[skip:])
        return any(fnmatch.fnmatchcase(c, pat.rstrip("/")) for c in candidates for pat in self.exclude)


def _depth_below(start: Path | None, root: Path) -> int:
    """How many path parts `start` has below `root` (0 when there is no start or it lies elsewhere)."""
    if start is None:
        return 0
    try:
        return len(start.resolve().relative_to(root).parts)
    except ValueError:
        return 0


def known_targets() -> str:
    """The target spellings the compiler supports, for messages (the one table in tilelang_core.target)."""
    from tilelang_core.target import supported

    return supported()


def _canonical_target(name: str) -> str | None:
    """The canonical name for `name` ("90a" -> "sm_90a"), or None when it names no supported target."""
    from tilelang_core.target import UnknownTargetError, canonical

    try:
        return canonical(name)
    except UnknownTargetError:
        return None


def known_codes() -> frozenset[str]:
    """Every diagnostic code in the code table."""
    from tilelang_core.codes import CODES

    return frozenset(CODES)


def validate_targets(names, where: str) -> tuple[str, ...]:
    """Check arch names against the known ones; ConfigError names the bad one and lists the good ones."""
    out: list[str] = []
    for name in (n.strip() for n in names):
        canonical = _canonical_target(name) if name else None
        if name and canonical is None:
            raise ConfigError(f"{where}: unknown target {name!r}; known targets: {known_targets()}")
        if canonical and canonical not in out:
            out.append(canonical)
    if not out:
        raise ConfigError(f"{where}: no target given; known targets: {known_targets()}")
    return tuple(out)


def validate_codes(names, where: str) -> frozenset[str]:
    """Check diagnostic codes against the code table; ConfigError names the bad one (with a suggestion)."""
    known = known_codes()
    for name in names:
        if name not in known:
            import difflib

            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else "; see docs/diagnostics.md"
            raise ConfigError(f"{where}: unknown diagnostic code {name!r}{hint}")
    return frozenset(names)


def split_list(values) -> list[str]:
    """Flatten repeated, comma-separated flag values ("a,b" "c") into ["a", "b", "c"]."""
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.tilelsp] table."""
    folder = start if start.is_dir() else start.parent
    for candidate in [folder, *folder.resolve().parents]:
        path = candidate / "pyproject.toml"
        if path.is_file() and _mentions_table(path):
            return path
    return None


def _mentions_table(path: Path) -> bool:
    """Cheap test for a [tool.tilelsp] table before paying for a TOML parse."""
    try:
        return "tool.tilelsp" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def load(start: Path | None = None) -> Config:
    """The config for files under `start` (default: the cwd): nearest [tool.tilelsp], else defaults."""
    start = Path(start) if start is not None else Path.cwd()
    path = find_pyproject(start) or find_pyproject(Path.cwd())
    if path is None:
        return Config(root=Path.cwd())
    stat = path.stat()
    return _load_file(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=32)
def _load_file(path: Path, mtime_ns: int, size: int) -> Config:
    """Parse one pyproject.toml's table (cached by path, mtime and size: PATH arguments often share one)."""
    return parse(_read_table(path), path)


def _read_table(path: Path) -> dict:
    """The [tool.tilelsp] table of a pyproject.toml (ConfigError for invalid TOML)."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read [tool.tilelsp]: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("tilelsp", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.tilelsp] must be a table")
    return table


def parse(table: dict, path: Path) -> Config:
    """Validate a [tool.tilelsp] table into a Config; ConfigError names the offending key."""
    for key in table:
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown key tool.tilelsp.{key} (known keys: {', '.join(KEYS)})")
    lists = {key: _string_list(table, key, path) for key in KEYS if key in table}
    where = f"{path}: tool.tilelsp."
    return Config(
        root=path.parent,
        path=path,
        targets=validate_targets(lists["targets"], where + "targets") if "targets" in lists else None,
        select=validate_codes(lists["select"], where + "select") if "select" in lists else None,
        ignore=validate_codes(lists.get("ignore", ()), where + "ignore"),
        exclude=tuple(lists.get("exclude", ())),
    )


def _string_list(table: dict, key: str, path: Path) -> list[str]:
    """The value of `key` as a list of strings (a single string is accepted as a one-item list)."""
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: tool.tilelsp.{key} must be a list of strings, got {value!r}")
    return value


def relative_display(path: Path) -> str:
    """`path` relative to the cwd when it lies below it, else as an absolute path (posix separators)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return Path(rel).as_posix() if not rel.startswith("..") else Path(os.path.abspath(path)).as_posix()
