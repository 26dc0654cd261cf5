"""The sanitizer's reduction-step check (a mixin of SanitizingLowering): the T.copy statements of a serial or
pipelined loop that feed a reduction (T.gemm operands, T.reduce_*(clear=False) sources, through copies and element
stores inside the loop) must move their global source region, from one iteration to the next, by exactly the
tile's extent along the one axis their offset follows the loop on (forwards or backwards).

A moved offset of 0 is fine (group scales read for several iterations); any other step leaves a gap (part of the
axis skipped) or an overlap (summed twice). Only consecutive iterations are compared: a copy under a condition
(block-sparse kernels skip tiles) is compared when it also ran in the iteration before. Copies whose offset follows
the loop through a tensor read (gathers: paged and sparse kernels; a base read once, as varlen kernels do, is fine),
follows the loop on two axes, sits in a loop over several variables, or shares the loop with another copy of the
same tensor are not checked. Each checked copy keeps three int32 slots of the `sanitizer_state` tensor (seen,
previous offset, previous loop value), cleared before its loop starts; the grid runs serially, so one set per copy
suffices.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import children, walk
from .expr import cast, const

_REDUCTION_LOOPS = ("serial", "pipelined")


class StepChecks:
    """Mixin: `loops` clears the slots of the copies checked in it, `_s_Copy` checks the step before the copy."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._loop_stack: list = []  # the tile-IR loops being lowered, outermost first
        self._loop_slots: dict = {}  # id of a loop -> the state slots to clear before it
        self._lets: dict = {}  # let var -> its value (tile IR), to follow an offset through `ko = k + ...`

    def loops(self, s, k, body_fn=None, bound=None):
        if k != 0:
            return super().loops(s, k, body_fn, bound)
        self._loop_stack.append(s)
        try:
            out = super().loops(s, k, body_fn, bound)
        finally:
            self._loop_stack.pop()
        slots = self._loop_slots.pop(id(s), [])
        if not slots:
            return out
        zero = [self.tirx.BufferStore(self.state, const(0, "int32"), [const(k, "int32")]) for k in slots]
        return self.tirx.SeqStmt(zero + [out])

    def _s_LetStmt(self, s):
        self._lets[s.var] = s.value
        return super()._s_LetStmt(s)

    def _s_Copy(self, s):
        check = self._step_check(s)
        out = super()._s_Copy(s)
        out = out if isinstance(out, list) else [out]
        return out if check is None else [check] + out

    def _step_check(self, s: N.Copy):
        """The check of the copy's step along its loop's axis, or None when it is not a checked copy."""
        if s.src.buffer.scope != "global" or s.dst.buffer.scope == "global" or not s.src.axes:
            return None
        found = self._step_axis(s)
        if found is None:
            return None
        loop, axis = found
        if axis >= 4:  # the report keeps four indices
            return None
        src = self.ops.view(s.src)
        dst = self.ops.view(s.dst, like=src)
        if s.src.kind == "point":
            src = self.ops.view(s.src, like=dst)
        extent = src.extents[axis]
        if not isinstance(extent, int) or extent <= 0:
            return None
        tirx = self.tirx
        seen, prev, prev_iter = self.slots, self.slots + 1, self.slots + 2
        self.slots += 3
        self._loop_slots.setdefault(id(loop), []).extend([seen, prev, prev_iter])
        start, iteration = cast(src.starts[axis], "int32"), cast(self.vars[loop.vars[0]], "int32")
        step = as_int(loop.step) if loop.step is not None else 1
        at = lambda k: [const(k, "int32")]  # noqa: E731
        moved = start - tirx.BufferLoad(self.state, at(prev))
        bad = tirx.And(tirx.NE(moved, const(0, "int32")),
                       tirx.And(tirx.NE(moved, const(extent, "int32")), tirx.NE(moved, const(-extent, "int32"))))
        names = ", ".join(v.name for v in loop.vars)
        site = self._site("sanitize-reduction-step", s.span, s.src.buffer, False, (names, axis))
        other = [tirx.BufferLoad(self.state, at(prev)), const(extent, "int32")]
        record = self._record(site, list(src.starts), other)
        was_seen = tirx.EQ(tirx.BufferLoad(self.state, at(seen)), const(1, "int32"))
        next_iter = tirx.EQ(iteration - tirx.BufferLoad(self.state, at(prev_iter)), const(step, "int32"))
        return self._seq([self._when([was_seen, next_iter, bad], record),
                          tirx.BufferStore(self.state, const(1, "int32"), at(seen)),
                          tirx.BufferStore(self.state, start, at(prev)),
                          tirx.BufferStore(self.state, iteration, at(prev_iter))])

    def _step_axis(self, s: N.Copy):
        """(the innermost enclosing reduction loop the copy's offset follows, the one axis it follows it on)."""
        deps = [self._deps(a.start) for a in s.src.axes]
        for loop in reversed(self._loop_stack):
            if any(v in gathered for _, gathered in deps for v in loop.vars):
                return None  # the offset follows the loop through a tensor read: a gather
            axes = [d for d, (direct, _) in enumerate(deps) if any(v in direct for v in loop.vars)]
            if not axes:
                continue
            fixed_step = loop.step is None or as_int(loop.step) is not None
            if (loop.kind not in _REDUCTION_LOOPS or len(loop.vars) != 1 or not fixed_step
                    or len(axes) != 1 or not self._feeds_reduction(loop, s)):
                return None
            return loop, axes[0]
        return None

    def _deps(self, e) -> tuple[set, set]:
        """(the variables an expression depends on arithmetically, those it depends on through a tensor read's
        indices), following let bindings: `kv_start = cu_seqlens[bz]` is a fixed base, `BlockIdx[bz, k]` a gather."""
        direct, gathered = set(), set()
        todo = [(e, False)]
        while todo:
            expr, inside = todo.pop()
            stack = [expr]
            while stack:
                n = stack.pop()
                if isinstance(n, N.Load):
                    todo.extend((i, True) for i in n.indices)
                    continue
                if isinstance(n, N.Var):
                    into = gathered if inside else direct
                    if n not in into:
                        into.add(n)
                        if n in self._lets:
                            todo.append((self._lets[n], inside))
                    continue
                stack.extend(c for c in children(n))
        return direct, gathered

    @staticmethod
    def _feeds_reduction(loop: N.For, copy: N.Copy) -> bool:
        """True when the copy's destination reaches a T.gemm operand or a T.reduce_*(clear=False) source inside
        the loop, and no other copy in the loop reads the same tensor."""
        nodes = list(walk(loop.body))
        if sum(isinstance(n, N.Copy) and n.src.buffer is copy.src.buffer for n in nodes) != 1:
            return False
        fed = set()
        for n in nodes:
            if isinstance(n, N.Gemm):
                fed.update((n.a.buffer, n.b.buffer))
            elif isinstance(n, N.Reduce) and not n.clear:
                fed.add(n.src.buffer)
        grew = True
        while grew and copy.dst.buffer not in fed:
            grew = False
            for n in nodes:
                sources = ()
                if isinstance(n, N.Copy) and n.dst.buffer in fed:
                    sources = (n.src.buffer,)
                elif isinstance(n, N.Store) and n.buffer in fed:
                    sources = tuple(x.buffer for x in walk(n.value) if isinstance(x, N.Load))
                new = [b for b in sources if b not in fed and b.scope != "global"]
                fed.update(new)
                grew = grew or bool(new)
        return copy.dst.buffer in fed
