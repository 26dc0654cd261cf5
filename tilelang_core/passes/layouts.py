"""Fragment layouts: which thread holds which element of a `local.fragment` buffer, and inference of them.

Before: `C_local = T.alloc_fragment((128, 128), "float32")`, `T.gemm(A_s, B_s, C_local)`,
`T.reduce_max(C_local, m, dim=1)`.
After: {C_local: mma(128x128, warps 2x2), m: mma-rows(of C_local)}; every other fragment gets a
layout from the Parallel loops and copies that tie it to one (or the generic/replicated default).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from ..ir.visitor import walk


class LayoutError(Exception):
    """No consistent layout exists; carries the span of the construct that conflicts."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.span = span


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
    """Element e (row-major) lives in thread e % T, register e // T."""

    shape: tuple[int, ...]
    threads: int

    @property
    def size(self) -> int:
        s = 1
        for d in self.shape:
            s *= d
        return s

    @property
    def regs(self) -> int:
        return -(-self.size // self.threads)

    @property
    def exact(self) -> bool:
        return self.size % self.threads == 0

    def flat(self, tx: str, r: str) -> str:
        return f"({r} * {self.threads} + {tx})"

    def coords(self, tx: str, r: str) -> list[str]:
        return unravel(self.flat(tx, r), self.shape)

    def describe(self) -> str:
        return f"generic {'x'.join(map(str, self.shape))} over {self.threads} threads ({self.regs} regs/thread)"


@dataclass(frozen=True)
class Replicated:
    """Every thread holds every element (small per-row vectors next to generic tiles)."""

    shape: tuple[int, ...]

    @property
    def regs(self) -> int:
        s = 1
        for d in self.shape:
            s *= d
        return s

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


# ---------------------------------------------------------------------------------------------
# inference


def warp_partition(policy: str, m: int, n: int, warps: int) -> tuple[int, int]:
    """Split `warps` over an MxN gemm tile: FullRow (all on M), FullCol (all on N) or Square."""
    if policy == "FullRow" and m % (16 * warps) == 0:
        return warps, 1
    if policy == "FullCol" and n % (8 * warps) == 0:
        return 1, warps
    best = None
    for wm in range(1, warps + 1):
        if warps % wm:
            continue
        wn = warps // wm
        if m % (16 * wm) or n % (8 * wn):
            continue
        score = abs(m / wm - n / wn)
        if best is None or score < best[0]:
            best = (score, wm, wn)
    if best is None:
        raise LayoutError(f"a {m}x{n} gemm tile cannot be split over {warps} warps into 16x8 mma atoms; "
                          "use tile sizes that are multiples of 16 (M) and 8 (N) per warp")
    return best[1], best[2]


def _full_vars(loop: N.For, indices) -> bool:
    return len(indices) == len(loop.vars) and all(isinstance(i, N.Var) and i is v for i, v in zip(indices, loop.vars))


def fragment_accesses(stmt):
    """(buffer, indices) of every fragment Load/Store inside `stmt`."""
    for node in walk(stmt):
        if isinstance(node, (N.Load, N.Store)) and node.buffer.scope == "local.fragment":
            yield node.buffer, node.indices


def infer_layouts(func: N.PrimFunc, threads: int, wgmma: frozenset = frozenset(), roles=None) -> dict:
    """Map every fragment Buffer of `func` to a layout (raises LayoutError when they conflict).

    `wgmma` holds id()s of the gemms lowered to Hopper wgmma (accumulators interleaved per warpgroup).
    `roles` (passes.roles.Roles): a tile op inside a thread role is laid out over the role's threads."""
    layouts: dict = {}
    threads_of = roles.threads_of if roles is not None else (lambda node, default: default)

    def assign(buf, layout, span):
        old = layouts.get(buf)
        if old is not None and old != layout:
            raise LayoutError(f"fragment '{buf.name}' needs two different layouts: {old.describe()} and "
                              f"{layout.describe()}; copy it into a second fragment", span)
        layouts[buf] = layout
        return old is None

    nodes = list(walk(func.body))
    for g in (n for n in nodes if isinstance(n, N.Gemm)):
        c = g.c.buffer
        if c.scope != "local.fragment":
            continue
        m, n = _mat_shape(c)
        wg, warps = id(g) in wgmma, max(threads_of(g, threads) // 32, 1)
        wm, wn = (warps, 1) if wg else warp_partition(g.policy, m, n, warps)
        assign(c, Mma(m, n, wm, wn, wg), g.span)
        a = g.a.buffer
        if a.scope == "local.fragment":
            if g.transpose_a and wg:
                raise LayoutError(f"T.gemm with A in registers ('{a.name}', a fragment) and transpose_A=True is not "
                                  "supported by the wgmma lowering; stage A in shared memory (T.alloc_shared) or "
                                  "store it untransposed", g.span)
            am, ak = _mat_shape(a)
            if g.transpose_a:  # the buffer is [K][M]: the same registers as A, each element stored at (k, m)
                am, ak = ak, am
            assign(a, Mma(am, ak, wm, 1, wg, rep=wn, transpose=g.transpose_a), g.span)  # rows of M slice w // wn
    views = _fragment_views(nodes)
    changed = True
    while changed:
        changed = False
        for node in nodes:
            changed |= _propagate(node, layouts, assign)
        changed |= _derive_views(views, layouts, assign)
    for node in nodes:
        if isinstance(node, N.Allocate) and node.buffer.scope == "local.fragment" and node.buffer not in layouts:
            shape = shape_ints(node.buffer.shape)
            if shape is None:
                raise LayoutError(f"fragment '{node.buffer.name}' has a shape that is not known at compile "
                                  "time; fragments need static shapes", node.span)
            users = _user_threads(node.buffer, nodes, threads_of, threads)
            replicate = (_partial_use(node.buffer, nodes) or len(shape) == 1 and shape[0] < max(users)
                         or _element_only(node.buffer, nodes))
            if not replicate and len(users) > 1:
                raise LayoutError(f"fragment '{node.buffer.name}' is used by thread roles of "
                                  f"{' and '.join(map(str, users))} threads; give each role its own fragment",
                                  node.span)
            layouts[node.buffer] = Replicated(shape) if replicate else Generic(shape, users[0])
    _derive_views(views, layouts, assign)
    return layouts


def _fragment_views(nodes) -> list:
    """Views (T.reshape / T.view) of fragments that `nodes` access, in order."""
    out = []
    for node in nodes:
        bufs = [node.buffer] if isinstance(node, (N.Load, N.Store)) else [
            getattr(node, f).buffer for f in ("src", "dst", "c") if isinstance(getattr(node, f, None), N.Region)]
        for b in bufs:
            if b.base is not None and b.scope == "local.fragment" and b not in out:
                out.append(b)
    return out


def _derive_views(views, layouts, assign) -> bool:
    """Give each fragment view the layout of its base seen through the reshape."""
    changed = False
    for v in views:
        base = v.base
        if base not in layouts:
            continue
        lay, vshape, bshape = layouts[base], shape_ints(v.shape), shape_ints(base.shape)
        if vshape is None or bshape is None or v.dtype != base.dtype or _count(vshape) != _count(bshape):
            raise LayoutError(f"fragment view '{v.name}' of '{base.name}' needs a static shape with as many "
                              f"elements and the same dtype as '{base.name}'", v.span)
        if isinstance(lay, Generic) and not lay.exact:
            raise LayoutError(f"fragment view '{v.name}' views '{base.name}', whose {lay.size} elements do not "
                              "spread evenly over the threads; use a tile size that is a multiple of the thread "
                              "count", v.span)
        derived = Replicated(tuple(vshape)) if isinstance(lay, Replicated) else View(lay, tuple(bshape), tuple(vshape))
        changed |= assign(v, derived, v.span)
    return changed


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _mat_shape(buf) -> tuple[int, int]:
    shape = shape_ints(buf.shape)
    if shape is None or len(shape) < 2:
        raise LayoutError(f"gemm operand '{buf.name}' needs a static 2-D shape", buf.span)
    return shape[-2], shape[-1]


def _propagate(node, layouts, assign) -> bool:
    """One propagation step through a Parallel loop, a fragment copy or a reduction."""
    changed = False
    if isinstance(node, N.For) and node.kind == "parallel":
        full = [b for b, idx in fragment_accesses(node.body) if _full_vars(node, idx)]
        known = [layouts[b] for b in full if b in layouts]
        if known:
            for b in full:
                changed |= assign(b, known[0], node.span)
            parent = known[0] if isinstance(known[0], Mma) else None
            if parent is not None and parent.wn == 1 and not parent.transpose:
                for b, idx in fragment_accesses(node.body):
                    if len(idx) == 1 and isinstance(idx[0], N.Var) and idx[0] is node.vars[0] and len(node.vars) == 2:
                        changed |= assign(b, MmaRow.of(parent), node.span)
        row = [layouts[b] for b in full if isinstance(layouts.get(b), MmaRow)]
        if row and len(node.vars) == 1:
            for b in full:
                changed |= assign(b, row[0], node.span)
    elif isinstance(node, N.Copy):
        s, d = node.src.buffer, node.dst.buffer
        if s.scope == d.scope == "local.fragment" and shape_ints(s.shape) == shape_ints(d.shape):
            lay = layouts.get(s) or layouts.get(d)
            if lay is not None:
                changed |= assign(s, lay, node.span) | assign(d, lay, node.span)
    elif isinstance(node, N.Reduce):
        src = layouts.get(node.src.buffer)
        if isinstance(src, Mma) and src.wn == 1 and not src.transpose and node.dim == 1 and node.dst.buffer.scope == "local.fragment":
            if shape_ints(node.dst.buffer.shape) in ((src.m,), (src.m, 1)):
                changed |= assign(node.dst.buffer, MmaRow.of(src), node.span)
    return changed


def _user_threads(buf, nodes, threads_of, threads: int) -> list:
    """Thread counts of the roles that access fragment `buf`, sorted (the block's when none)."""
    counts = set()
    for node in nodes:
        if isinstance(node, (N.Load, N.Store)):
            bufs = (node.buffer,)
        else:
            bufs = tuple(getattr(node, f).buffer for f in ("src", "dst", "c", "a", "b", "value")
                         if isinstance(getattr(node, f, None), N.Region))
        if buf in bufs:
            counts.add(threads_of(node, threads))
    return sorted(counts) or [threads]


def _element_only(buf, nodes) -> bool:
    """True when only scalar statements outside T.Parallel loops index `buf` (no tile op, no Parallel loop): every
    thread keeps its own copy of every element (a per-thread array, `prefetch[stage, r] = ...` in a serial loop)."""
    for node in nodes:
        if isinstance(node, N.For) and node.kind == "parallel":
            if any(b is buf for b, _ in fragment_accesses(node.body)):
                return False
        elif isinstance(node, N.TILE_OPS) and any(
                isinstance(getattr(node, f, None), N.Region) and getattr(node, f).buffer is buf
                for f in ("src", "dst", "c", "a", "b", "value")):
            return False
    return True


def _partial_use(buf, nodes) -> bool:
    """True when a Parallel loop indexes `buf` with fewer loop vars than it has (a broadcast use)."""
    for node in nodes:
        if isinstance(node, N.For) and node.kind == "parallel":
            for b, idx in fragment_accesses(node.body):
                if b is buf and not _full_vars(node, idx):
                    return True
        if isinstance(node, N.Reduce) and node.dst.buffer is buf:
            return True
    return False


def describe(layouts: dict) -> str:
    """Text table of inferred layouts (the `layouts` stage)."""
    lines = [f"# {buf.name}: {lay.describe()}" for buf, lay in layouts.items()]
    return "\n".join(lines) if lines else "# no fragments"


__all__ = ["Mma", "MmaRow", "Generic", "Replicated", "View", "LayoutError", "infer_layouts", "warp_partition",
           "unravel", "ravel", "describe", "as_int"]
