"""The sanitizer's in-place hazard checks and sampled grids (a mixin of SanitizingLowering).

A tracked tensor the kernel also reads has a *reader* shadow (int32, zeroed by the host): the id of the first block
of the launch that read each element. Reading an element whose writer is another block of this launch (read after
write), or plainly storing to one whose first reader is another block (write after read), is an in-place hazard:
on a GPU the blocks run in any order. Atomic writes (writer -1) and earlier launches (ids below the launch's base)
never count. A sampled grid runs only the first and last block of each axis.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from .expr import cast, const, dtype_of
from .shadow import handle


class HazardChecks:
    """Mixin: reader-shadow checks on reads and stores of tracked tensors, and the sampled grid loop."""

    def _sampled(self, loop, s: N.Launch):
        """The grid loop with its body run only for the first and last block of each axis."""
        tirx = self.tirx
        cond = None
        for v, g in zip(s.block_vars, self._grid):
            b = self.vars[v]
            end = tirx.Or(tirx.EQ(b, const(0, dtype_of(b))), tirx.EQ(b, cast(g, dtype_of(b)) - const(1, dtype_of(b))))
            cond = end if cond is None else tirx.And(cond, end)
        body = loop.body
        if isinstance(body, tirx.SeqStmt) and len(s.block_vars) > 1:  # the block indices' Binds stay first
            seq = list(body.seq)
            head = [x for x in seq if isinstance(x, tirx.Bind)][:len(s.block_vars)]
            rest = seq[len(head):]
            body = tirx.SeqStmt(head + [tirx.IfThenElse(cond, self._seq(rest), None)])
        else:
            body = tirx.IfThenElse(cond, body, None)
        return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body)

    def _read_hazard(self, buf, idx, cond, span, buffer: N.Buffer, element: bool) -> list:
        """A read of a tracked tensor: report an element another block of this launch wrote (not atomically),
        and note this block as the element's first reader."""
        writer, reader = self.writers.get(handle(buf)), self.readers.get(handle(buf))
        if writer is None or buffer.scope != "global":
            return []
        tirx = self.tirx
        w = tirx.BufferLoad(writer, idx)
        writes = self.write_spans.get(buffer, ())
        site = self._site("sanitize-inplace-hazard", span, buffer, element, ("read",) + writes)
        other = tirx.And(tirx.GE(w, self._base), tirx.NE(w, self._me()))
        stmts = [tirx.IfThenElse(other, self._record(site, idx, self._coords(w - self._base)), None)]
        if reader is not None:
            first = tirx.LT(tirx.BufferLoad(reader, idx), self._base)
            stmts.append(tirx.IfThenElse(first, tirx.BufferStore(reader, self._me(), idx), None))
        return [self._when([cond], self._seq(stmts))]

    def _write_hazard(self, buf, idx):
        """A plain store to a tracked tensor: report an element another block of this launch read first."""
        reader = self.readers.get(handle(buf))
        if reader is None:
            return None
        tirx = self.tirx
        r = tirx.BufferLoad(reader, idx)
        current = self._stmts[-1] if self._stmts else None
        element = self._element_store(current)
        buffer = self._store_buffer(current) if element else self._tile_buffer(buf)
        reads = self.read_spans.get(buffer, ())
        site = self._site("sanitize-inplace-hazard", getattr(current, "span", None), buffer, element,
                          ("write",) + reads)
        other = tirx.And(tirx.GE(r, self._base), tirx.NE(r, self._me()))
        return tirx.IfThenElse(other, self._record(site, idx, self._coords(r - self._base)), None)


def access_spans(func: N.PrimFunc) -> tuple[dict, dict]:
    """(each global tensor -> the spans of the statements that write it plainly, -> those that read it), for the
    hazard messages."""
    writes: dict = {}
    reads: dict = {}
    for n in walk(func.body):
        found = _dst_and_sources(n)
        if found is None or getattr(n, "span", None) is None:
            continue
        for table, bufs in ((writes, {found[0]}), (reads, found[1])):
            for b in bufs:
                if b.scope == "global" and n.span not in table.get(b, ()):
                    table[b] = table.get(b, ()) + (n.span,)
    return writes, reads


def _dst_and_sources(n):
    """(the buffer a statement writes, the buffers it reads), or None for other nodes."""
    if isinstance(n, N.Store):
        return n.buffer, {x.buffer for x in walk(n.value) if isinstance(x, N.Load)}
    if isinstance(n, N.Gemm):
        return n.c.buffer, {n.a.buffer, n.b.buffer}
    if isinstance(n, (N.Copy, N.Reduce, N.CumSum)):
        return n.dst.buffer, {n.src.buffer}
    if isinstance(n, N.Fill):
        return n.dst.buffer, set()
    return None
