"""`tilelang.env`: TileLang's environment settings (cache and temp folders, CUDA home, pass profiling, pass diffs).

`tilelang.env` is this module, whatever way it is reached (`import tilelang.env`, `tilelang.env.X`): its class is
`Environment`, whose settings are `EnvVar` descriptors read from the environment on each access; assigning one
(`tilelang.env.TILELANG_CACHE_DIR = path`) forces its value until the forced value is set back to None.
"""
from __future__ import annotations

import math
import os
import shutil
import sys
import types
from pathlib import Path

from ..lower_trace import pass_diff_mode


class EnvVar:
    """One setting: the forced value when set, else the environment variable `key`, else `default` (a string, or
    a function of the Environment for settings that follow another)."""

    def __init__(self, key: str, default):
        self.key = key
        self.default = default
        self._forced_value = None

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        if self._forced_value is not None:
            return self._forced_value
        if self.key in os.environ:
            return os.environ[self.key]
        return self.default(instance) if callable(self.default) else self.default

    def __set__(self, instance, value) -> None:
        self._forced_value = value


def _cuda_home(_env) -> str:
    """CUDA_PATH, else the folder above nvcc's bin, else ""."""
    nvcc = shutil.which("nvcc")
    return os.environ.get("CUDA_PATH") or (str(Path(nvcc).resolve().parent.parent) if nvcc else "")


class Environment(types.ModuleType):
    """The class of the `tilelang.env` module: TileLang's settings, names and defaults."""

    TILELANG_CACHE_DIR = EnvVar("TILELANG_CACHE_DIR", os.path.expanduser("~/.tilelang/cache"))
    TILELANG_TMP_DIR = EnvVar("TILELANG_TMP_DIR", lambda env: os.path.join(env.TILELANG_CACHE_DIR, "tmp"))
    TILELANG_PRINT_ON_COMPILATION = EnvVar("TILELANG_PRINT_ON_COMPILATION", "1")
    TILELANG_PASS_PROFILE_THRESHOLD_MS = EnvVar("TILELANG_PASS_PROFILE_THRESHOLD_MS", "")
    TILELANG_PASS_DIFF = EnvVar("TILELANG_PASS_DIFF", "0")
    TILELANG_PASS_DIFF_OUTPUT = EnvVar("TILELANG_PASS_DIFF_OUTPUT", os.path.join("tmp", "pass_diff_output"))
    CUDA_HOME = EnvVar("CUDA_HOME", _cuda_home)

    @property
    def TILELANG_PACKAGE_PATH(self) -> str:  # noqa: N802 -- TileLang's name
        """The folder of the package behind `import tilelang` (tilelang_core here)."""
        return str(Path(__file__).resolve().parent.parent)

    def get_pass_profile_threshold_ms(self) -> float:
        """TILELANG_PASS_PROFILE_THRESHOLD_MS as milliseconds (0.0 when unset or blank)."""
        return parse_threshold_ms(self.TILELANG_PASS_PROFILE_THRESHOLD_MS)

    def get_pass_diff_mode(self) -> str | None:
        """The lower-trace mode TILELANG_PASS_DIFF asks for (None: off; "terminal", "html" or "both"); while it is
        set (and TL_LOWER_TRACE is not), every lowering is traced into TILELANG_PASS_DIFF_OUTPUT (lower_trace.py)."""
        return pass_diff_mode(self.TILELANG_PASS_DIFF)

    def is_cache_enabled(self) -> bool:
        """False when TILELANG_DISABLE_CACHE is set to a true value."""
        return os.environ.get("TILELANG_DISABLE_CACHE", "0").lower() not in ("1", "true", "yes", "on")

    def enable_cache(self) -> None:
        """Turn the kernel cache back on."""
        os.environ["TILELANG_DISABLE_CACHE"] = "0"

    def disable_cache(self) -> None:
        """Record that the cache is off (tilelang_core's artifact cache is content-addressed; it stays correct)."""
        os.environ["TILELANG_DISABLE_CACHE"] = "1"


def parse_threshold_ms(value) -> float:
    """A pass-profile threshold in milliseconds: None or blank is 0.0; anything but a finite number >= 0 is a
    ValueError."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0.0
    try:
        ms = float(value)
    except (TypeError, ValueError):
        ms = math.nan
    if not math.isfinite(ms) or ms < 0:
        raise ValueError(f"the pass-profile threshold {value!r} must be a finite non-negative number of "
                         "milliseconds")
    return ms


def resolve_pass_profile_threshold_ms(pass_configs, key, fallback) -> float:
    """The threshold from `pass_configs[key]` when present (0 included), else `fallback()`."""
    if pass_configs and key in pass_configs:
        return parse_threshold_ms(pass_configs[key])
    return float(fallback())


sys.modules[__name__].__class__ = Environment
env = sys.modules[__name__]
