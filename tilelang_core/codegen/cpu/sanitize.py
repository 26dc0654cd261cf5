"""The CPU backend's instrumented mode: the same lowering with shadow state and checks, run at LLVM speed.

Shadow state lives in TIR next to the kernel's own buffers:

- every shared / fragment / local buffer gets an int8 *init* buffer of its shape, zeroed where it is allocated;
  each store sets its bit, and a read of a clear bit is an uninitialised read;
- every tracked tensor parameter (written by the kernel, or an `out_idx` output) gets an int32 *writer* tensor
  from the host, zeroed: each plain store checks the writer (another block of the same launch: a race) and sets
  it to 1 + the block's id; atomic stores set -1; what stays 0 in an output was never written;
- a tracked tensor the kernel also reads gets an int32 *reader* tensor: the first block of the launch that read
  each element. A read of an element another block of the launch wrote, and a plain store to an element another
  block read, are in-place hazards (the order of the blocks decides what is read);
- sanitize_steps.py checks the offsets of the copies that feed a reduction loop, sanitize_overflow.py evaluates
  int32 scalar arithmetic in 64 bits; `sample=True` runs only the first and last block of each grid axis;
- user element indexing of a shared / fragment / local buffer outside its shape is recorded, and the access is
  still skipped (stores) or reads 0 (loads), as in a plain build. Tile ops and global accesses are not checked:
  they are bounds-guarded by design (TileLang's LegalizeSafeMemoryAccess predicates every global access).

A check records the first violation per site (code, source span, buffer) into a report tensor: hit flag, block
coordinates, thread id, the element's indices and (for races) the other block. The grid runs serially, so
"first" is the first block in launch order. Loads are expressions, so their checks are placed by a post-pass
right before the innermost statement that holds the load (inside its guards); T.gemm and T.reduce check and
mark whole regions around the op, so their inner loops stay as in a plain build.
"""
from __future__ import annotations

from ...ir import nodes as N
from ..tvm_loader import load
from .build import CpuLowering, lowering_error
from .module import host_target
from .expr import LoweringError, as_bool, cast, const
from .sanitize_hazards import HazardChecks, access_spans
from .sanitize_overflow import OverflowChecks
from .sanitize_steps import StepChecks
from .shadow import (ATOMIC, COLUMNS, CheckPlacement, SanitizedModule, SanitizingExpr, Site, atomic_call, handle,
                     read_params, tracked_params)
from .storage import SCRATCH_SCOPE

SHADOWED = ("shared", "shared.dyn", "local.fragment", "local", "local.var")
TILE_OP_NAMES = {N.Copy: "T.copy", N.Gemm: "T.gemm", N.Fill: "T.fill", N.Reduce: "T.reduce", N.CumSum: "T.cumsum",
                 N.AtomicAdd: "T.atomic_add"}



class SanitizingLowering(HazardChecks, StepChecks, OverflowChecks, CpuLowering):
    """CpuLowering plus shadow buffers, checks at each access and the report; `outputs`: out_idx positions;
    `sample`: run only the blocks at the ends of each grid axis."""

    def __init__(self, func: N.PrimFunc, outputs=(), sample: bool = False):
        super().__init__(func)
        self.sample = sample
        self.serial_grid = True  # deterministic first violation; writer checks need one block at a time
        self.expr = SanitizingExpr(self.vars, self.buffers, load_hook=self._load_hook, call_hook=self._call_hook)
        self.expr.view_hook = self.view
        self.sites: list[Site] = []
        self._site_ids: dict = {}
        self.report = self.tirx.decl_buffer((self.tirx.Var("sanitizer_sites", "int32"), len(COLUMNS)), "int32",
                                            "sanitizer_report")
        self.tracked = tracked_params(func, outputs)
        self.read_tracked = read_params(func, self.tracked)
        self.outputs = {func.params[k] for k in outputs}
        self._fresh: set = set()  # handles of the out_idx outputs' tirx buffers (their writer 0: never written)
        self.writers: dict = {}  # handle of a param's tirx buffer -> its writer shadow
        self.writer_params: list = []
        self.readers: dict = {}  # handle of a param's tirx buffer -> its reader shadow
        self.reader_params: list = []
        self.write_spans, self.read_spans = access_spans(func)
        self.state = self.tirx.decl_buffer((self.tirx.Var("sanitizer_slots", "int32"),), "int32", "sanitizer_state")
        self.slots = 0  # int32 state slots used (sanitize_steps.py)
        self.init_bits: dict = {}  # handle of a scratch tirx buffer -> its init shadow
        self.checks: dict = {}  # handle of a BufferLoad -> the check statement placed before its statement
        self._stmts: list = []  # the tile-IR statements being lowered, innermost last
        self._bulk = False  # inside T.gemm / T.reduce: region checks instead of per-element ones
        self._launch: N.Launch | None = None
        self._grid: list = []
        self._base = const(1, "int32")  # writer id of the current launch's block 0

    # -- function -------------------------------------------------------------------------------------
    def run(self):
        """The instrumented PrimFunc: the kernel's params, the writer and reader shadows, the state, the report."""
        prim = super().run()
        body = CheckPlacement(self.checks)(prim.body)
        params = list(prim.params) + self.writer_params + self.reader_params + [self.state, self.report]
        out = self.tirx.PrimFunc(params, body)
        return out.with_attr("global_symbol", self.func.name).with_attr("tirx.noalias", not self.func.non_restrict)

    def _param(self, p):
        buf = super()._param(p)
        if isinstance(p, N.Buffer) and p in self.tracked:
            shadow = self.tirx.decl_buffer(buf.ty.shape, "int32", p.name + "_writer")
            self.writers[handle(buf)] = shadow
            self.writer_params.append(shadow)
            if p in self.outputs:
                self._fresh.add(handle(buf))
        if isinstance(p, N.Buffer) and p in self.read_tracked:
            shadow = self.tirx.decl_buffer(buf.ty.shape, "int32", p.name + "_reader")
            self.readers[handle(buf)] = shadow
            self.reader_params.append(shadow)
        return buf

    # -- statements --------------------------------------------------------------------------------------
    def stmts(self, s) -> list:
        self._stmts.append(s)
        try:
            return super().stmts(s)
        finally:
            self._stmts.pop()

    def _s_Launch(self, s):
        saved = self._launch, self._grid
        self._launch, self._grid = s, [self.index(g) for g in s.grid]
        try:
            out = super()._s_Launch(s)
            if self.sample and isinstance(out, self.tirx.For):
                out = self._sampled(out, s)
        finally:
            total = self._grid[0]
            for g in self._grid[1:]:
                total = total * g
            self._base = self._base + total
            self._launch, self._grid = saved
        return out

    def _s_Allocate(self, s):
        out = super()._s_Allocate(s)
        b = s.buffer
        if b.scope not in SHADOWED or b in self.views or b.base is not None:
            return out
        buf = self.buffers[b]
        shadow = self.tirx.decl_buffer(buf.ty.shape, "int8", b.name + "_init", scope=SCRATCH_SCOPE)
        self.init_bits[handle(buf)] = shadow
        bit = const(1 if s.init is not None else 0, "int8")
        fill = self.loop_nest([("z", e) for e in buf.ty.shape], lambda v: self.tirx.BufferStore(shadow, bit, v))
        return out[:1] + [self.tirx.AllocBuffer(shadow), fill] + out[1:]

    def _s_Gemm(self, s):
        pre = [self._region_check(self.ops.view(r), s) for r in (s.a, s.b)]
        if s.clear_accum is not True:
            check_c = self._region_check(self.ops.view(s.c), s)
            if isinstance(s.clear_accum, N.Expr) and check_c is not None:
                check_c = self.tirx.IfThenElse(self.tirx.Not(as_bool(self.expr(s.clear_accum))), check_c, None)
            pre.append(check_c)
        return self._bulk_op(s, self.ops.gemm, pre, s.c)

    def _s_Reduce(self, s):
        pre = [self._region_check(self.ops.view(s.src), s)]
        if not s.clear:
            pre.append(self._region_check(self.ops.view(s.dst), s))
        return self._bulk_op(s, self.ops.reduce, pre, s.dst)

    def _bulk_op(self, s, lower, pre, dst: N.Region):
        self._bulk = True
        try:
            body = lower(s)
        finally:
            self._bulk = False
        body = body if isinstance(body, list) else [body]
        return [p for p in pre if p is not None] + body + [m for m in [self._region_mark(self.ops.view(dst), s)] if m]

    # -- accesses -------------------------------------------------------------------------------------
    def _load_hook(self, e: N.Load, buf, idx):
        if e.buffer in self.packed:  # its byte read is the checked one (cpu/packed.py)
            return self.packed[e.buffer].load(idx)
        idx = self.private(e.buffer, idx, e.span)
        value, out, cond = self._load(buf, idx)
        checks = []
        if cond is not None and e.buffer.scope != "global":  # TileLang guards global accesses itself
            checks.append(self._when([self.tirx.Not(cond)], self._record(self._site("sanitize-out-of-bounds", e.span,
                                                                                   e.buffer, True), idx)))
        unset = self._unset(buf, idx)
        if unset is not None:
            site = self._site("sanitize-uninitialized-read", e.span, e.buffer, True)
            checks.append(self._when([cond, unset], self._record(site, idx)))
        checks += self._read_hazard(buf, idx, cond, e.span, e.buffer, True)
        self._register(value, checks, list(self.expr.path))
        return out

    def guarded_load(self, buf, idx, is_global: bool = True):
        """A tile op's read: checked against the shadows unless the op checks its regions in bulk."""
        value, out, cond = self._load(buf, idx)
        unset = None if self._bulk else self._unset(buf, idx)
        checks = []
        if unset is not None:
            site = self._site("sanitize-uninitialized-read", self._span(), self._tile_buffer(buf), False)
            checks.append(self._when([cond, unset], self._record(site, idx)))
        if not self._bulk and handle(buf) in self.writers:
            checks += self._read_hazard(buf, idx, cond, self._span(), self._tile_buffer(buf), False)
        self._register(value, checks, [])
        return out

    def guarded_store(self, buf, idx, value, is_global: bool = True):
        """buf[idx] = value with its shadow update (init bit, writer id and race check); out of bounds: the
        user's element stores are recorded, every such store is skipped."""
        cond = self._in_bounds(buf, idx)
        bits, dtype = self.fp8_elements.get(buf, (buf, None))
        stmt = self.tirx.BufferStore(bits, value if dtype is None else self.fp8_code(value, dtype), idx)
        if not self._bulk:
            stmt = self._seq(self._shadow_store(buf, idx, stmt))
        if cond is None:
            return stmt
        current = self._stmts[-1] if self._stmts else None
        if not self._element_store(current) or self._store_buffer(current).scope == "global":
            return self.tirx.IfThenElse(cond, stmt, None)  # tile ops and global stores are guarded in TileLang too
        # a GPU computes the value whatever the index: the value's loads are checked on the skipped side too
        oob = self._record(self._site("sanitize-out-of-bounds", current.span, self._store_buffer(current), True), idx)
        return self.tirx.IfThenElse(cond, stmt, self.tirx.SeqStmt([self.tirx.Evaluate(value), oob]))

    def _shadow_store(self, buf, idx, stmt) -> list:
        init = self.init_bits.get(handle(buf))
        if init is not None:
            return [stmt, self.tirx.BufferStore(init, const(1, "int8"), idx)]
        writer = self.writers.get(handle(buf))
        if writer is None:
            return [stmt]
        if self._atomic(self._stmts[-1] if self._stmts else None):
            return [stmt, self.tirx.BufferStore(writer, const(ATOMIC, "int32"), idx)]
        return [self._race_check(writer, idx), self._write_hazard(buf, idx), stmt,
                self.tirx.BufferStore(writer, self._me(), idx)]

    def _race_check(self, writer, idx):
        tirx = self.tirx
        w = tirx.BufferLoad(writer, idx)
        other = tirx.And(tirx.GE(w, self._base), tirx.NE(w, self._me()))  # an earlier launch's id is < base
        current = self._stmts[-1] if self._stmts else None
        buf = self._store_buffer(current) if self._element_store(current) else self._tile_buffer(writer)
        site = self._site("sanitize-block-race", current.span if current is not None else None, buf,
                          self._element_store(current))
        return tirx.IfThenElse(other, self._record(site, idx, self._coords(w - self._base)), None)

    def _coords(self, flat) -> list:
        """Block coordinates of a flat block index of the current launch (bx fastest)."""
        out, stride = [], None
        for v, g in zip(self._launch.block_vars, self._grid):
            q = flat if stride is None else self.tirx.floordiv(flat, stride)
            out.append(q if v is self._launch.block_vars[-1] else self.tirx.floormod(q, g))
            stride = g if stride is None else stride * g
        return out

    # -- regions (T.gemm, T.reduce) ------------------------------------------------------------------------
    def _region_check(self, view, s):
        init = self.init_bits.get(handle(view.buf))
        if init is None:
            return None
        site = self._site("sanitize-uninitialized-read", s.span, view.region.buffer, False)
        axes = list(range(len(view.extents)))

        def body(v):
            idx = view.at(axes, v)
            return self._when([self._in_bounds(view.buf, idx), self._clear(init, idx)], self._record(site, idx))

        return self.ops.nest(view.extents, body, "chk")

    def _region_mark(self, view, s):
        if handle(view.buf) not in self.init_bits and handle(view.buf) not in self.writers:
            return None
        axes = list(range(len(view.extents)))

        def body(v):
            idx = view.at(axes, v)
            marks = self._seq(self._shadow_store(view.buf, idx, None))
            cond = self._in_bounds(view.buf, idx)
            return marks if cond is None else self.tirx.IfThenElse(cond, marks, None)

        return self.ops.nest(view.extents, body, "mark")

    # -- helpers ------------------------------------------------------------------------------------------
    def _load(self, buf, idx):
        bits, dtype = self.fp8_elements.get(buf, (buf, None))  # fp8 elements: their bits, decoded
        value = self.tirx.BufferLoad(bits, idx)
        cond = self._in_bounds(buf, idx)
        out = value if cond is None else self.tirx.if_then_else(cond, value, const(0, str(bits.ty.dtype)))
        return value, out if dtype is None else self.fp8_read(out, dtype), cond

    def _clear(self, init, idx):
        return self.tirx.EQ(self.tirx.BufferLoad(init, idx), const(0, "int8"))

    def _unset(self, buf, idx):
        """The condition that buf[idx] was never written (scratch: its init bit; an out_idx output: its writer),
        or None when nothing tracks it."""
        init = self.init_bits.get(handle(buf))
        if init is not None:
            return self._clear(init, idx)
        if handle(buf) in self._fresh and not self.sample:  # sampled: other blocks' writes did not happen
            return self.tirx.EQ(self.tirx.BufferLoad(self.writers[handle(buf)], idx), const(0, "int32"))
        return None

    def _when(self, conds, stmt):
        """`stmt` under nested ifs (never one `and`: a later condition may read where an earlier one guards)."""
        for c in reversed([c for c in conds if c is not None]):
            stmt = self.tirx.IfThenElse(as_bool(c), stmt, None)
        return stmt

    def _register(self, value, checks, path):
        if checks:
            self.checks[handle(value)] = self._when(path, self._seq(checks))

    def _site(self, code: str, span, buffer: N.Buffer, element: bool, detail: tuple = ()) -> int:
        names = tuple(v.name for v in self._launch.block_vars) if self._launch is not None else ()
        current = self._stmts[-1] if self._stmts else None
        construct = "element" if element else TILE_OP_NAMES.get(type(current), "the tile op")
        key = (code, span, buffer, construct, detail)
        if key not in self._site_ids:
            self._site_ids[key] = len(self.sites)
            self.sites.append(Site(code, span, buffer, names, construct, detail))
        return self._site_ids[key]

    def _record(self, site: int, idx, other=None):
        """Write the site's row (hit, block coordinates, thread, indices, other) unless it is already set."""
        tirx, r = self.tirx, self.report
        blocks = [self.vars[v] for v in self._launch.block_vars][:3] if self._launch is not None else []
        thread = self.tid if self.tid is not None else const(-1, "int32")
        values = [const(1, "int32")] + _pad(blocks, 3) + [thread] + _pad(list(idx), 4) + _pad(other or [], 3)
        stores = [tirx.BufferStore(r, cast(v, "int32"), [const(site, "int32"), const(k, "int32")])
                  for k, v in enumerate(values)]
        hit = tirx.BufferLoad(r, [const(site, "int32"), const(0, "int32")])
        return tirx.IfThenElse(tirx.EQ(hit, const(0, "int32")), tirx.SeqStmt(stores), None)

    def _me(self):
        """This block's writer id: launch base + flat block index (bx fastest); the first launch's base is 1."""
        flat = None
        for v, g in reversed(list(zip(self._launch.block_vars, self._grid))):
            b = cast(self.vars[v], "int32")
            flat = b if flat is None else b + g * flat
        return self._base + flat

    def _span(self):
        s = self._stmts[-1] if self._stmts else None
        return getattr(s, "span", None)

    def _tile_buffer(self, tirx_buf) -> N.Buffer:
        """The tile-IR buffer behind a tirx buffer (or its writer shadow), for messages."""
        for b, t in self.buffers.items():
            if handle(t) == handle(tirx_buf) or self.writers.get(handle(t)) is tirx_buf:
                return b
        raise LoweringError("the sanitizer lost track of a buffer", self._span(), "internal-error")

    @staticmethod
    def _element_store(s) -> bool:
        return isinstance(s, N.Store) or atomic_call(s)

    @staticmethod
    def _store_buffer(s) -> N.Buffer:
        return s.buffer if isinstance(s, N.Store) else s.value.args[0].buffer

    @staticmethod
    def _atomic(s) -> bool:
        return isinstance(s, N.AtomicAdd) or atomic_call(s)

    def _seq(self, stmts):
        stmts = [s for s in (stmts if isinstance(stmts, list) else [stmts]) if s is not None]
        if not stmts:
            return self.tirx.Evaluate(const(0, "int32"))
        return stmts[0] if len(stmts) == 1 else self.tirx.SeqStmt(stmts)

def _pad(values: list, n: int) -> list:
    return (values + [const(-1, "int32")] * n)[:n]


def build_sanitized(func: N.PrimFunc, outputs=(), sample: bool = False) -> SanitizedModule:
    """Lower `func` in the instrumented mode and build it with LLVM (`outputs`: the out_idx positions; `sample`:
    only the first and last block of each grid axis run)."""
    from ...passes.loop_exits import lower_loop_exits

    try:
        lowering = SanitizingLowering(lower_loop_exits(func), outputs, sample)
        prim = lowering.run()
    except LoweringError as err:
        raise lowering_error(func, err, "lowering-unsupported") from None
    except Exception as err:  # a TVM constructor refusing our IR: report, never crash the caller
        msg = str(err).strip().splitlines()[-1][:300] if str(err).strip() else type(err).__name__
        raise lowering_error(func, RuntimeError(f"the sanitizer's CPU lowering failed: {msg}"), "codegen-error") from None
    ns = load()
    try:
        ex = ns.tvm.compile(ns.tvm.IRModule({func.name: prim}), target=ns.tvm.target.Target(host_target()))
    except Exception as err:  # tvm raises its own error types from C++
        msg = str(err).strip().splitlines()[-1][:300]
        raise lowering_error(func, RuntimeError(f"LLVM build of the sanitizer failed: {msg}"), "codegen-error") from None
    by_name = {p.name: p for p in func.params if isinstance(p, N.Buffer)}
    return SanitizedModule(func, ex, lowering.sites, [by_name[p.name] for p in lowering.tracked],
                           [by_name[p.name] for p in lowering.read_tracked], lowering.slots)
