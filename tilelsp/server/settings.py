"""Typed server settings (section `tilelsp` of workspace/configuration) with defaults and validation.

Invalid values fall back to the default and produce a warning line the server logs to the client.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from tilelang_core.target import DEFAULT_ARCH

_DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Settings:
    """What the user can configure; every field has a safe default."""

    targets: tuple[str, ...] = (DEFAULT_ARCH,)
    checkOnChange: bool = True
    debounceMs: int = 200
    lowerOnSave: bool = True
    verifyDevice: str = "auto"
    trustWorkspace: bool = False
    workerTimeoutSec: int = 60
    extra: dict = field(default_factory=dict, compare=False)


def _valid_target(t) -> bool:
    from tilelang_core.target import UnknownTargetError, canonical

    try:
        return isinstance(t, str) and bool(canonical(t))
    except UnknownTargetError:
        return False


def _coerce(name: str, value, default):
    """The validated value of one setting, or raise ValueError saying why."""
    if name == "targets":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)) or not value or not all(_valid_target(t) for t in value):
            raise ValueError("expected a non-empty list of targets like [\"sm_90a\", \"sm_80\"]")
        return tuple(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError("expected a non-negative number")
        return int(value)
    if name == "verifyDevice" and value not in _DEVICES:
        raise ValueError(f"expected one of {', '.join(_DEVICES)}")
    return value


def parse_settings(raw) -> tuple[Settings, list[str]]:
    """Settings from a configuration object (dict or None) and the warnings for values that were ignored."""
    if raw is None:
        return Settings(), []
    if hasattr(raw, "_asdict"):
        raw = raw._asdict()
    if not isinstance(raw, dict):
        return Settings(), [f"tilelsp settings must be an object, got {type(raw).__name__}; using defaults"]
    values, warnings, defaults = {}, [], Settings()
    for f in fields(Settings):
        if f.name == "extra" or f.name not in raw or raw[f.name] is None:
            continue
        try:
            values[f.name] = _coerce(f.name, raw[f.name], getattr(defaults, f.name))
        except ValueError as exc:
            warnings.append(f"tilelsp.{f.name} = {raw[f.name]!r} ignored: {exc}; using {getattr(defaults, f.name)!r}")
    known = {f.name for f in fields(Settings)}
    extra = {k: v for k, v in raw.items() if k not in known}
    return replace(defaults, extra=extra, **values), warnings
