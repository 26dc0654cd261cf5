"""Binding a @jit function's call arguments the way TileLang's JIT does: defaults applied, positional and keyword
forms of one call giving one cache key, tensors set apart from compile-time values, `**kwargs` flattened, and
compile-time values made hashable (lists and dicts become tuples) for the key."""
from __future__ import annotations

import inspect

_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def is_tensor(v) -> bool:
    """True for a tensor argument (anything with shape, dtype and data_ptr, as torch tensors have)."""
    return hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "data_ptr")


def cache_value(value):
    """`value` as a hashable cache-key part: lists/tuples as tuples, dicts and sets by their sorted items, each
    element the same way (TypeError for another unhashable value)."""
    if isinstance(value, (list, tuple)):
        return tuple(cache_value(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((k, cache_value(v)) for k, v in value.items()), key=lambda kv: repr(kv[0])))
    if isinstance(value, (set, frozenset)):
        return frozenset(cache_value(v) for v in value)
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"Unsupported unhashable JIT compile-time cache key value of type {type(value).__name__} "
                        f"({value!r}): pass a hashable value (a tuple, a frozen dataclass, a number or a string)") \
            from None
    return value


def _tensor_part(tensors: dict):
    """What the cache key keeps of the tensor arguments (name, shape, dtype, device), or None without any."""
    if not tensors:
        return None
    return tuple((k, tuple(v.shape), str(v.dtype), str(getattr(v, "device", ""))) for k, v in tensors.items())


class ArgumentBinder:
    """The `.func` of a @jit object: `parse_args` (the cache key of a call and its tensor arguments) and
    `_parse_phase1_key` (the compile-time key, the tensors and the flattened compile-time arguments)."""

    def __init__(self, pyfunc, mode: str):
        self.pyfunc = pyfunc
        self.mode = mode
        self.signature = inspect.signature(pyfunc)
        self.__name__ = getattr(pyfunc, "__name__", "kernel")
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc  # inspect.signature(binder) is the function's

    def set_mode(self, mode: str) -> None:
        """Set TileLang's JIT mode ("lazy": a factory returning a prim_func; "eager": the function is the kernel)."""
        self.mode = mode

    def __call__(self, *args, **kwargs):
        """Call the wrapped Python function."""
        return self.pyfunc(*args, **kwargs)

    def bind(self, args: tuple, kwargs: dict) -> tuple[dict, dict]:
        """(arguments by parameter name with defaults applied and `*args` kept as a tuple, extra keywords): keywords
        the signature does not name go to its `**kwargs`, or are kept as extra compile-time values without one.
        TypeError as Python raises it for a bad call (missing or repeated arguments)."""
        params = self.signature.parameters
        var_kw = next((p.name for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
        named = {k for k, p in params.items() if p.kind not in _VARIADIC}
        extra = {k: v for k, v in kwargs.items() if k not in named}
        given = {k: v for k, v in kwargs.items() if k in named}
        bound = self.signature.bind(*args, **given)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        if var_kw is not None:
            arguments.pop(var_kw, None)
        return arguments, extra

    def _parse_phase1_key(self, *args, **kwargs) -> tuple[tuple, dict, dict]:
        """(hashable key of the compile-time arguments, tensor arguments by name, compile-time arguments by name
        with `**kwargs` flattened into them)."""
        arguments, extra = self.bind(args, kwargs)
        tensors = {k: v for k, v in arguments.items() if is_tensor(v)}
        compile_kwargs = {k: v for k, v in arguments.items() if k not in tensors}
        key = tuple(cache_value(v) for v in compile_kwargs.values())
        if extra:
            key += (tuple(sorted((k, cache_value(v)) for k, v in extra.items())),)
        return key, tensors, {**compile_kwargs, **extra}

    def parse_args(self, *args, **kwargs) -> tuple[tuple, dict]:
        """((compile-time key, tensor shapes/dtypes or None), tensor arguments by name): one key for every call form
        (positional, keyword, in any order, defaults given or left out) of the same arguments."""
        key, tensors, _ = self._parse_phase1_key(*args, **kwargs)
        return (key, _tensor_part(tensors)), tensors
