"""Argument binding of @jit objects (runtime/jit_binding.py): one cache key for every call form of the same
arguments, hashable keys for list/dict compile-time values, Python's own errors for bad calls, and the call-form
cache in front of the kernel cache of a JITFactory."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from tilelang_core.runtime.jit_binding import ArgumentBinder, cache_value

torch = pytest.importorskip("torch")


def factory(hidden: int, stride: int, flag: bool = False, opts=(1, 2)):
    return hidden, stride, flag, opts


def with_kwargs(A, block: int = 64, **meta):
    return A, block, meta


@pytest.mark.parametrize("args,kwargs", [
    ((8, 4), {}), ((8, 4, False, (1, 2)), {}), ((), {"stride": 4, "hidden": 8}), ((8,), {"stride": 4, "opts": [1, 2]}),
])
def test_every_call_form_gives_one_key(args, kwargs):
    binder = ArgumentBinder(factory, "lazy")
    assert binder.parse_args(*args, **kwargs) == (((8, 4, False, (1, 2)), None), {})


def test_extra_keywords_are_kept_sorted_and_nested_values_made_hashable():
    key, _ = ArgumentBinder(factory, "lazy").parse_args(8, 4, z=1, a={"k": [3, 4]})
    assert key == ((8, 4, False, (1, 2), (("a", (("k", (3, 4)),)), ("z", 1))), None)
    hash(key)


def test_tensors_are_set_apart_and_var_keywords_flattened():
    a = torch.zeros(2, 3)
    p1, tensors, compile_kwargs = ArgumentBinder(with_kwargs, "eager")._parse_phase1_key(a, note=[1])
    assert p1 == (64, (("note", (1,)),)) and tensors == {"A": a}
    assert compile_kwargs == {"block": 64, "note": [1]}
    key, kernel_args = ArgumentBinder(with_kwargs, "eager").parse_args(a, block=32)
    assert key == ((32,), (("A", (2, 3), "torch.float32", "cpu"),)) and kernel_args == {"A": a}


def test_bad_calls_raise_pythons_errors():
    import inspect

    binder = ArgumentBinder(factory, "lazy")
    assert inspect.signature(binder) == inspect.signature(factory) and binder(1, 2) == (1, 2, False, (1, 2))
    with pytest.raises(TypeError, match="multiple values"):
        binder.parse_args(8, hidden=8, stride=4)
    with pytest.raises(TypeError, match="missing a required argument"):
        binder.parse_args(hidden=8)


def test_an_unhashable_object_is_refused_by_name():
    @dataclass
    class Config:
        axis: int

    assert cache_value({"b": [1], "a": {2}}) == (("a", frozenset({2})), ("b", (1,)))
    with pytest.raises(TypeError, match="Unsupported unhashable JIT compile-time cache key value of type Config"):
        cache_value([Config(0)])


def test_factory_caches_by_call_form_then_canonical_key(monkeypatch):
    from tilelang_core.runtime.jit import JITFactory

    calls = []

    def make(n: int, m: int = 2):
        calls.append((n, m))
        raise RuntimeError("not built in this test")

    jitted = JITFactory(make)
    key, _ = jitted.func.parse_args(n=4)
    sentinel = object()
    jitted._kernel_cache[key] = sentinel
    assert jitted(4) is sentinel and jitted(4, 2) is sentinel and jitted(m=2, n=4) is sentinel and not calls
    monkeypatch.setattr(jitted.func, "parse_args", lambda *a, **k: pytest.fail("call form not cached"))
    assert jitted(4) is sentinel
    with pytest.raises(TypeError, match="must be hashable.*unhashable type: 'list'"):
        jitted(4, m=[1])
