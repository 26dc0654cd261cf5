"""Layouts built on the host (`T.Layout`, `T.Fragment`, `tilelang.layout.Layout` / `Fragment` outside a kernel).

A layout is an index map over a concrete input shape. Its forward function is evaluated once over the whole domain
with numpy index grids (`i * 4 + j`, `//` and `%` work elementwise; a function numpy cannot run is called point by
point), so comparing (`is_equal`), sizing (`get_output_shape`) and expanding layouts is exact. Inside a kernel
body the frontend reads these names as the builtins they are (the class's module maps them there).
"""
from __future__ import annotations

import inspect

_MODULE = "tilelang_core.layout"  # the frontend reads tilelang_core.layout.X as tilelang.layout.X (= T.X)


def _shape(shape) -> tuple[int, ...]:
    """A concrete input shape: ints only (a symbolic dim cannot be evaluated on the host)."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise ValueError(f"a host-built layout's shape must be constant positive ints, got {shape!r}")
    return dims


def _arity(fn) -> int | None:
    """How many positional arguments `fn` takes (None when it takes *args or cannot be inspected)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _components(value) -> list:
    """The outputs of a forward function: a list/tuple of them, or one."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _evaluate(fn, shape: tuple[int, ...], extra: tuple = ()) -> list:
    """`fn` over every index of `shape` (plus the extra trailing argument grids): one int64 array per output."""
    import numpy as np

    grids = np.indices(shape + tuple(len(e) for e in extra), dtype=np.int64)
    try:
        outs = _components(fn(*grids))
        return [np.broadcast_to(np.asarray(_as_int(o), dtype=np.int64), grids.shape[1:]) for o in outs]
    except Exception:  # noqa: BLE001 -- the function is user code that numpy cannot run: evaluate point by point
        points = list(np.ndindex(*grids.shape[1:]))
        rows = [[_as_int(o) for o in _components(fn(*p))] for p in points]
        return [np.array([r[k] for r in rows], dtype=np.int64).reshape(grids.shape[1:]) for k in range(len(rows[0]))]


def _as_int(value):
    """A numpy array stays; a tvm IntImm or Python int becomes an int."""
    return value if hasattr(value, "shape") and hasattr(value, "dtype") and not hasattr(value, "value") else int(value)


def _same(a: list, b: list) -> bool:
    import numpy as np

    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


class Layout:
    """`T.Layout(shape, forward_fn)`: maps each index of `shape` to one output index or a list of them."""

    def __init__(self, shape, forward_fn):
        self.shape = _shape(shape)
        self.forward_fn = forward_fn
        self._outputs = None

    def outputs(self) -> list:
        """The forward map over the whole input domain: one int64 array (of the input shape) per output."""
        if self._outputs is None:
            self._outputs = _evaluate(self.forward_fn, self.shape)
        return self._outputs

    def get_input_shape(self) -> list[int]:
        """The input shape."""
        return list(self.shape)

    def get_output_shape(self) -> list[int]:
        """The extent of each output (its largest value + 1)."""
        return [int(o.max()) + 1 for o in self.outputs()]

    def is_equal(self, other) -> bool:
        """True when `other` is a layout of the same input shape mapping every index to the same outputs."""
        return type(other) is type(self) and other.shape == self.shape and _same(self.outputs(), other.outputs())

    def expand(self, leading) -> Layout:
        """This layout with leading input dims prepended, each also a leading output (`expand([4])`)."""
        if isinstance(leading, bool) or not isinstance(leading, (int, list, tuple)):
            raise TypeError(f"Layout.expand takes an int or a list of ints, got {type(leading).__name__}")
        dims = [leading] if isinstance(leading, int) else list(leading)
        if not dims:
            return self
        if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
            raise ValueError(f"Layout.expand needs positive dims, got {leading!r}")
        n, inner = len(dims), self.forward_fn
        return Layout(dims + list(self.shape), lambda *idx: [*idx[:n], *_components(inner(*idx[n:]))])

    def repeat(self, dim: int, factor: int) -> Layout:
        """This layout tiled `factor` times along input `dim`; the tile number becomes a new leading output."""
        rank = len(self.shape)
        if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
            raise ValueError(f"Layout.repeat needs a positive int factor, got {factor!r}")
        if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
            raise ValueError(f"Layout.repeat's dim must be in [-{rank}, {rank}) for this rank-{rank} layout, "
                             f"got {dim!r}")
        if factor == 1:
            return self
        dim, inner, extent = dim % rank, self.forward_fn, self.shape[dim % rank]
        shape = list(self.shape)
        shape[dim] *= factor

        def forward(*idx):
            local = list(idx)
            local[dim] = idx[dim] % extent
            return [idx[dim] // extent, *_components(inner(*local))]

        return Layout(shape, forward)

    def __repr__(self) -> str:
        return f"Layout(shape={list(self.shape)})"


class Fragment(Layout):
    """`T.Fragment(shape, forward_fn=... | forward_thread_fn=..., replicate=1, forward_index_fn=...)`: maps each
    index (and replica) to the thread that holds it and its position in that thread's registers."""

    def __init__(self, shape, forward_fn=None, forward_thread_fn=None, replicate: int = 1, forward_index_fn=None):
        if (forward_fn is None) == (forward_thread_fn is None):
            raise TypeError("T.Fragment takes forward_fn (returning (thread, index)) or forward_thread_fn, not both")
        self.replicate = int(replicate)
        if self.replicate < 1:
            raise ValueError(f"T.Fragment's replicate must be a positive int, got {replicate!r}")
        if forward_fn is not None:
            forward_thread_fn = self._part(forward_fn, 0)
            forward_index_fn = self._part(forward_fn, 1)
        super().__init__(shape, forward_index_fn or (lambda *idx: []))
        self.forward_thread_fn = forward_thread_fn
        self._threads = None

    def _part(self, fn, k: int):
        """One half of a forward_fn's (thread, index) result, as a function of the same arguments."""
        return lambda *args: _components(fn(*args))[k]

    def threads(self) -> list:
        """The thread of every index (and replica, as a trailing axis when replicate > 1)."""
        if self._threads is None:
            takes_rep = self.replicate > 1 or _arity(self.forward_thread_fn) == len(self.shape) + 1
            extra = (range(self.replicate),) if takes_rep else ()
            self._threads = _evaluate(self.forward_thread_fn, self.shape, extra)
        return self._threads

    def outputs(self) -> list:
        """The register index map (forward_index_fn; the replica argument, when taken, is 0)."""
        if self._outputs is None:
            fn, n = self.forward_fn, len(self.shape)
            call = (lambda *idx: fn(*idx, 0)) if _arity(fn) == n + 1 else fn
            self._outputs = _evaluate(call, self.shape)
        return self._outputs

    def get_thread_size(self) -> int:
        """How many threads hold the fragment (the largest thread index + 1)."""
        return int(max(t.max() for t in self.threads())) + 1

    def is_equal(self, other) -> bool:
        """True when `other` holds every index (and replica) in the same thread at the same register index."""
        return (super().is_equal(other) and other.replicate == self.replicate
                and _same(self.threads(), other.threads()))

    def __repr__(self) -> str:
        return f"Fragment(shape={list(self.shape)}, replicate={self.replicate})"


for _cls in (Layout, Fragment):
    _cls.__module__ = _MODULE
