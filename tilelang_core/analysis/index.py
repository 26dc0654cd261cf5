"""One pass over a kernel that indexes what the budgets and facts need: launches, allocations per launch,
every use of every buffer, live ranges of buffers (liveness) and the stage count of pipelined buffers."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import nodes as N
from .fastwalk import walk
from .infer import SHARED_SCOPES


@dataclass
class KernelIndex:
    """What one pass over a kernel found."""

    launches: list = field(default_factory=list)
    allocations: dict = field(default_factory=dict)  # id(Launch) -> [Allocate] (Launch hashes deeply)
    uses: dict = field(default_factory=dict)  # Buffer -> [Span]
    live: dict = field(default_factory=dict)  # Buffer -> (first, last) leaf position
    stages: dict = field(default_factory=dict)  # shared Buffer -> (stages, pipelined For)


def loop_stages(f: N.For) -> int:
    """How many buffered stages a T.Pipelined loop keeps (at least 1)."""
    if f.num_stages is not None:
        return max(f.num_stages, 1)
    if f.stage:
        return max(f.stage) + 1
    return 1


class _Indexer:
    def __init__(self) -> None:
        self.ix = KernelIndex()
        self.pos = 0
        self.loops: list[set] = []  # buffers used inside each enclosing loop
        self.pipelined: list[N.For] = []
        self.launch = None

    def stmt(self, s) -> None:
        """Index one statement (and everything under it)."""
        if s is None:
            return
        if isinstance(s, N.SeqStmt):
            for st in s.stmts:
                self.stmt(st)
        elif isinstance(s, (N.For, N.While)):
            self._for(s)
        elif isinstance(s, N.If):
            self.leaf(s.cond)
            self.stmt(s.then_body)
            self.stmt(s.else_body)
        elif isinstance(s, N.Launch):
            self._launch(s)
        else:
            if isinstance(s, N.Allocate) and self.launch is not None:
                self.ix.allocations.setdefault(id(self.launch), []).append(s)
            if isinstance(s, N.Copy) and self.pipelined:
                self._staged_copy(s)
            self.leaf(s)

    def _launch(self, s: N.Launch) -> None:
        outer, self.launch = self.launch, s
        self.ix.launches.append(s)
        self.stmt(s.body)
        self.launch = outer

    def _for(self, s) -> None:
        """A For or While: everything used in the body stays live across the whole loop."""
        for e in () if isinstance(s, N.While) else (*s.starts, *s.extents):
            self.leaf(e)
        start, inner = self.pos, set()
        self.loops.append(inner)
        if isinstance(s, N.While):
            self.leaf(s.cond)  # evaluated on every iteration
        pipelined = isinstance(s, N.For) and s.kind == "pipelined"
        if pipelined:
            self.pipelined.append(s)
        self.stmt(s.body)
        if pipelined:
            self.pipelined.pop()
        self.loops.pop()
        end = max(self.pos - 1, start)
        for b in inner:
            self._extend(b, start, end)

    def _staged_copy(self, c: N.Copy) -> None:
        if c.dst.buffer.scope in SHARED_SCOPES and c.src.buffer.scope == "global":
            loop = self.pipelined[-1]
            n = loop_stages(loop)
            if n > self.ix.stages.get(c.dst.buffer, (0, None))[0]:
                self.ix.stages[c.dst.buffer] = (n, loop)

    def leaf(self, node) -> None:
        """Give a leaf statement (or a loop bound / condition) the next position and record its uses."""
        pos = self.pos
        self.pos += 1
        for n in walk(node):
            if isinstance(n, (N.Load, N.Store, N.Region)):
                self._use(n.buffer, n.span, pos)
            elif isinstance(n, N.AnnotateLayout):
                for b, spec in n.entries:
                    if spec.span is not None:
                        self.ix.uses.setdefault(b, []).append(spec.span)

    def _use(self, buf, span, pos: int) -> None:
        if span is not None:
            self.ix.uses.setdefault(buf, []).append(span)
        self._extend(buf, pos, pos)
        for inner in self.loops:
            inner.add(buf)

    def _extend(self, buf, lo: int, hi: int) -> None:
        old = self.ix.live.get(buf)
        self.ix.live[buf] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))


def index_kernel(func: N.PrimFunc) -> KernelIndex:
    """Index one kernel instance in a single pass."""
    ixr = _Indexer()
    ixr.stmt(func.body)
    return ixr.ix


def peak(sizes: dict, ranges: dict) -> int:
    """The largest total of `sizes` (Buffer -> bytes) over buffers live at the same position."""
    spans = [(ranges[b], n) for b, n in sizes.items() if b in ranges]
    best = 0
    for p in sorted({p for (lo, hi), _ in spans for p in (lo, hi)}):
        best = max(best, sum(n for (lo, hi), n in spans if lo <= p <= hi))
    return best
