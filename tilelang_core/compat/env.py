"""`tilelang.env`: TileLang's environment settings that examples read (cache and temp folders, CUDA home)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


class Environment:
    """Settings read from the environment when accessed (TileLang's names and defaults)."""

    @property
    def TILELANG_CACHE_DIR(self) -> str:  # noqa: N802 -- TileLang's name
        """Where TileLang (and examples that build their own extensions) cache files."""
        return os.environ.get("TILELANG_CACHE_DIR", os.path.expanduser("~/.tilelang/cache"))

    @property
    def TILELANG_TMP_DIR(self) -> str:  # noqa: N802
        """Scratch folder under the cache."""
        return os.environ.get("TILELANG_TMP_DIR", os.path.join(self.TILELANG_CACHE_DIR, "tmp"))

    @property
    def CUDA_HOME(self) -> str:  # noqa: N802
        """CUDA_HOME / CUDA_PATH, else the folder above nvcc's bin, else ""."""
        home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
        nvcc = shutil.which("nvcc")
        return home or (str(Path(nvcc).resolve().parent.parent) if nvcc else "")

    @property
    def TILELANG_PACKAGE_PATH(self) -> str:  # noqa: N802
        """The folder of the package behind `import tilelang` (tilelang_core here)."""
        return str(Path(__file__).resolve().parent.parent)

    def is_cache_enabled(self) -> bool:
        """False when TILELANG_DISABLE_CACHE is set to a true value."""
        return os.environ.get("TILELANG_DISABLE_CACHE", "0").lower() not in ("1", "true", "yes", "on")

    def enable_cache(self) -> None:
        """Turn the kernel cache back on."""
        os.environ["TILELANG_DISABLE_CACHE"] = "0"

    def disable_cache(self) -> None:
        """Record that the cache is off (tilelang_core's artifact cache is content-addressed; it stays correct)."""
        os.environ["TILELANG_DISABLE_CACHE"] = "1"


env = Environment()


def __getattr__(name: str):
    """`import tilelang.env` binds this module where TileLang code expects the settings object."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(env, name)
