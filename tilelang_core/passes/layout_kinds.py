"""The kinds of fragment layout: which thread, in which register, holds each element of a `local.fragment`
buffer (Mma, MmaRow, Generic, Replicated, View), as TVMScript index text the lowering and the layout views share.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Mma:
    """The mma.sync m16n8 accumulator layout of an MxN tile over WMxWN warps."""

    m: int
    n: int
    wm: int
    wn: int
    interleave: bool = False  # wgmma: warp w owns rows 16w.. of every 16*wm-row band
    rep: int = 1  # a gemm's A in registers: `rep` consecutive warps (those splitting N) hold the same rows
    transpose: bool = False  # a transposed A in registers: the buffer is [n][m] (element (j, i) of the tile)

    @property
    def mi(self) -> int:
        return self.m // self.wm // 16

    @property
    def ni(self) -> int:
        return self.n // self.wn // 8

    @property
    def regs(self) -> int:
        return self.mi * self.ni * 4

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.m) if self.transpose else (self.m, self.n)

    def coords(self, tx: str, r: str) -> list[str]:
        """Element (i, j) held by thread `tx` in register `r` (TVMScript text)."""
        warp, lane = f"({tx} // 32 // {self.rep})" if self.rep > 1 else f"({tx} // 32)", f"({tx} % 32)"
        wi, wj = f"({warp} // {self.wn})", f"({warp} % {self.wn})"
        atom = f"({r} // 4)"
        if self.interleave:
            i = f"(({atom} // {self.ni} * {self.wm} + {wi}) * 16 + {lane} // 4 + {r} % 4 // 2 * 8)"
        else:
            i = f"({wi} * {self.m // self.wm} + {atom} // {self.ni} * 16 + {lane} // 4 + {r} % 4 // 2 * 8)"
        j = f"({wj} * {self.n // self.wn} + {atom} % {self.ni} * 8 + {lane} % 4 * 2 + {r} % 2)"
        return [j, i] if self.transpose else [i, j]

    def one_copy(self, tx: str) -> str | None:
        """Condition that picks one thread per element (None: every element has one owner already)."""
        return f"{tx} // 32 % {self.rep} == 0" if self.rep > 1 else None

    def describe(self) -> str:
        kind = f"wgmma.m64n{self.n}" if self.interleave else "mma.m16n8"
        copies = f", replicated over {self.rep} warps" if self.rep > 1 else ""
        copies += ", stored transposed" if self.transpose else ""
        return f"{kind} {self.m}x{self.n} warps {self.wm}x{self.wn}{copies} ({self.regs} regs/thread)"


@dataclass(frozen=True)
class MmaRow:
    """Rows of an Mma layout (a reduction along dim 1): each thread holds the rows it owns, replicated.

    Only M and the warp split matter, so one row vector serves every Mma tile of the same rows."""

    m: int
    wm: int
    wn: int
    interleave: bool = False

    @classmethod
    def of(cls, parent: "Mma") -> "MmaRow":
        return cls(parent.m, parent.wm, parent.wn * parent.rep, parent.interleave)

    @property
    def mi(self) -> int:
        return self.m // self.wm // 16

    @property
    def regs(self) -> int:
        return self.mi * 2

    def fits(self, parent) -> bool:
        """True when `parent` (an Mma layout) has the same rows per thread."""
        return isinstance(parent, Mma) and not parent.transpose and (parent.m, parent.wm, parent.wn * parent.rep, parent.interleave) == (
            self.m, self.wm, self.wn, self.interleave)

    def coords(self, tx: str, r: str) -> list[str]:
        wi, lane = f"({tx} // 32 // {self.wn})", f"({tx} % 32)"
        if self.interleave:
            return [f"(({r} // 2 * {self.wm} + {wi}) * 16 + {r} % 2 * 8 + {lane} // 4)"]
        return [f"({wi} * {self.m // self.wm} + {r} // 2 * 16 + {r} % 2 * 8 + {lane} // 4)"]

    def one_copy(self, tx: str) -> str:
        """Condition that picks one thread per row (one lane of a quad, one warp of the warps splitting N)."""
        return f"{tx} % 4 == 0" + (f" and {tx} // 32 % {self.wn} == 0" if self.wn > 1 else "")

    def reg_from_parent(self, parent: "Mma", r: str) -> str:
        """Register of this row layout that matches register `r` of the 2-D layout `parent`."""
        return f"({r} // 4 // {parent.ni} * 2 + {r} % 4 // 2)"

    def describe(self) -> str:
        return f"mma-rows of {self.m} rows, warps {self.wm}x{self.wn} ({self.regs} regs/thread, replicated per quad)"


@dataclass(frozen=True)
class Generic:
    """Element e (row-major) lives in thread e % T, register e // T; with `vec` > 1, each thread holds runs of `vec`
    consecutive elements: element e in thread e // vec % T, register (e // (vec * T)) * vec + e % vec."""

    shape: tuple[int, ...]
    threads: int
    vec: int = 1

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def regs(self) -> int:
        return -(-self.size // self.threads)

    @property
    def exact(self) -> bool:
        return self.size % self.threads == 0

    def flat(self, tx: str, r: str) -> str:
        if self.vec == 1:
            return f"({r} * {self.threads} + {tx})"
        return f"(({r} // {self.vec} * {self.threads} + {tx}) * {self.vec} + {r} % {self.vec})"

    def coords(self, tx: str, r: str) -> list[str]:
        return unravel(self.flat(tx, r), self.shape)

    def describe(self) -> str:
        runs = f", runs of {self.vec}" if self.vec > 1 else ""
        return f"generic {'x'.join(map(str, self.shape))} over {self.threads} threads{runs} ({self.regs} regs/thread)"


@dataclass(frozen=True)
class Replicated:
    """Every thread holds every element (small per-row vectors next to generic tiles)."""

    shape: tuple[int, ...]

    @property
    def regs(self) -> int:
        return math.prod(self.shape)

    def coords(self, tx: str, r: str) -> list[str]:
        return unravel(r, self.shape)

    def describe(self) -> str:
        return f"replicated {'x'.join(map(str, self.shape))} ({self.regs} regs/thread)"


@dataclass(frozen=True)
class View:
    """A T.reshape / T.view of a fragment: the same registers as `base`, each element at its row-major
    position in the view's shape (the thread that holds an element of the base holds it in the view)."""

    base: object
    base_shape: tuple[int, ...]
    shape: tuple[int, ...]

    @property
    def regs(self) -> int:
        return self.base.regs

    def coords(self, tx: str, r: str) -> list[str]:
        return unravel(ravel(self.base.coords(tx, r), self.base_shape), self.shape)

    def one_copy(self, tx: str) -> str | None:
        """Condition that picks one thread per element, as for the base layout."""
        return self.base.one_copy(tx) if isinstance(self.base, (Mma, MmaRow)) else None

    def describe(self) -> str:
        return f"view {'x'.join(map(str, self.shape))} of {self.base.describe()}"


def unravel(flat: str, shape) -> list[str]:
    """Row-major coordinates of a flat index (TVMScript text)."""
    out, stride = [], 1
    strides = []
    for d in reversed(shape):
        strides.append(stride)
        stride *= d
    strides.reverse()
    for k, (d, s) in enumerate(zip(shape, strides)):
        e = f"{flat} // {s}" if s > 1 else flat
        out.append(f"({e} % {d})" if k > 0 else f"({e})")
    return out


def in_fragment(lay, tx: str, r: str) -> list[str]:
    """Conditions that keep register `r` of thread `tx` inside the fragment: only a Generic layout whose size is not a
    multiple of the threads has a partial last register."""
    return [f"{lay.flat(tx, r)} < {lay.size}"] if isinstance(lay, Generic) and not lay.exact else []


def ravel(coords: list[str], shape) -> str:
    """Row-major flat index of coordinates (TVMScript text)."""
    text = coords[0]
    for c, d in zip(coords[1:], shape[1:]):
        text = f"({text} * {d} + {c})"
    return text
