"""A `@jit` kernel factory is an object, not a function wrapper (as TileLang's JITImpl): pytest does not collect a
module-level `@tilelang.jit def test_x(A: ...)` as a test, and inspect.signature still reads the factory's."""
from __future__ import annotations

import inspect

from _pytest.compat import get_real_func

from tilelang_core.runtime.jit import jit


def test_a_jit_factory_is_not_seen_as_a_function_but_keeps_its_signature():
    def test_factory(M, N=64, dtype="float16"):
        raise AssertionError("never called")

    factory = jit(test_factory)
    assert not inspect.isfunction(get_real_func(factory))
    assert list(inspect.signature(factory).parameters) == ["M", "N", "dtype"]
    assert factory.__name__ == "test_factory"
