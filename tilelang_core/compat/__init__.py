"""TileLang's helper submodules for the `tilelang` alias (`tilelang_core.alias`): one small module per real
submodule (autotuner lives in `runtime.autotune`). What tilelang_core cannot do — CUDA intrinsic emitters,
CUDA post-processing callbacks, layout plotting — is importable and raises `UnsupportedFeatureError` naming the
feature when the user's code calls it, never an ImportError while their file is being imported.
"""
from __future__ import annotations

import types


class UnsupportedFeatureError(NotImplementedError):
    """A real-TileLang API that tilelang_core does not provide was called."""

    def __init__(self, feature: str, hint: str = ""):
        self.feature = feature
        message = f"{feature} is not supported by tilelang_core"
        super().__init__(message + (f": {hint}" if hint else ""))


class Unsupported:
    """A name the real TileLang exports and tilelang_core does not implement: importable, raises when used."""

    def __init__(self, feature: str, hint: str = ""):
        self.feature = feature
        self.hint = hint
        # where TileLang defines it: the kernel frontend reads a call of it as that API (and rejects it)
        self.__module__, _, self.__name__ = feature.rpartition(".")

    def __call__(self, *args, **kwargs):
        raise UnsupportedFeatureError(self.feature, self.hint)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return Unsupported(f"{self.feature}.{name}", self.hint)

    def __repr__(self) -> str:
        return f"<{self.feature}: not supported by tilelang_core>"


class UnsupportedModule(types.ModuleType):
    """A real-TileLang module none of whose names tilelang_core implements (e.g. `tilelang.cuda.intrinsics`)."""

    def __init__(self, name: str, hint: str):
        super().__init__(name, f"{name}: not supported by tilelang_core ({hint})")
        self.__path__ = []
        self._hint = hint

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return Unsupported(f"{self.__name__}.{name}", self._hint)
