"""The sanitizer's host side: run a kernel instance in the CPU backend's instrumented mode on poisoned outputs,
and turn its report into Diagnostics at the user's lines (first block / thread, the element, the fix).

What it finds (codes in tilelang_core/codes.py): reads of shared / fragment / local values nothing wrote
(`sanitize-uninitialized-read`), elements of an `out_idx` output no block writes, as regions
(`sanitize-unwritten-output`), one element written by two blocks of a launch without an atomic
(`sanitize-block-race`), the user's own element indexing outside a shared / fragment / local buffer
(`sanitize-out-of-bounds`; global accesses are bounds-guarded in TileLang, as tile ops are), a reduction loop's
copy whose offset steps past or short of its tile (`sanitize-reduction-step`), a global element one block reads
and another writes in one launch (`sanitize-inplace-hazard`), and int32 scalar arithmetic that wraps
(`sanitize-index-overflow`).

Instances whose tensors hold more than SAMPLE_ELEMENTS elements in all run *sampled*: only the first and last
block of each grid axis (2**rank blocks), so a 1G-element kernel is checked in seconds. Per-block findings
(uninitialised scratch reads, out-of-bounds, steps, overflow) hold for the blocks that ran; races and hazards only
between them; unwritten outputs and reads of unwritten out_idx elements are not reported. A `sanitize-sampled`
note says so.
"""
from __future__ import annotations

from ..diagnostics import Diagnostic, Related, Severity
from ..ir import nodes as N
from ..ir.arith import as_int
from ..source import Span
from .index_uses import scatter_use, write_sites

MAX_RUNS = 3  # index ranges named in a coverage message
SAMPLE_ELEMENTS = 1 << 28  # tensor elements (all parameters) above which only the grid's corner blocks run
RUNTIME_CHECKED = ("dataflow",)  # check areas whose bugs the sanitizer observes: their errors do not stop it


def poison(t) -> None:
    """Fill a fresh output with a value no correct kernel leaves there (NaN, or the dtype's max)."""
    import torch

    if t.dtype == getattr(torch, "float4_e2m1fn_x2", None):  # packed fp4 pairs: -6 in both nibbles
        t.view(torch.uint8).fill_(0xFF)
    elif t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


def sanitize_kernel(kernel, inputs: list, sources: dict | None = None) -> list[Diagnostic]:
    """Run a built JITKernel's instance sanitized on `inputs` (its non-output arguments); the findings. `sources`:
    where the index tables' values came from (name -> phrase, from verify/contract.py), for the messages."""
    from ..runtime.kernel import contiguous_args

    full = kernel._plan.prepare(tuple(inputs), "cpu")
    for k in kernel.out_idx:
        poison(full[k])
    args, _ = contiguous_args(full)
    return sanitize_run(kernel.func, kernel.out_idx, kernel._plan.storage_views(args), sources)


def sanitize_run(func: N.PrimFunc, out_idx, args: list, sources: dict | None = None) -> list[Diagnostic]:
    """Build `func` sanitized and run it on every argument (contiguous CPU tensors and scalars); the findings."""
    from ..codegen.cpu.sanitize import build_sanitized

    elements = sum(a.numel() for p, a in zip(func.params, args) if isinstance(p, N.Buffer))
    sample = elements > SAMPLE_ELEMENTS
    module = build_sanitized(func, out_idx, sample)
    hits, writers = module.run(args)
    shapes = {p: tuple(a.shape) for p, a in zip(func.params, args) if isinstance(p, N.Buffer)}
    diags = [_finding(func, site, row, shapes, sources or {}) for site, row in hits]
    if sample:
        return diags + [_sampled_note(func, elements)]
    outputs = [func.params[k] for k in out_idx]
    return diags + [d for p in outputs if p in writers for d in _coverage(func, p, writers[p], sources or {})]


def _sampled_note(func: N.PrimFunc, elements: int) -> Diagnostic:
    launch = func.launch
    names = ", ".join(v.name for v in launch.block_vars) if launch is not None else "the grid"
    msg = (f"the tensors hold {elements:,} elements (more than {SAMPLE_ELEMENTS:,}), so only the first and last "
           f"block of each grid axis ({names}) ran sanitized: reads, bounds, steps and int32 overflow are checked "
           "in those blocks, races and in-place hazards only between them, and unwritten outputs are not checked; "
           "run a smaller instance for the whole grid")
    return Diagnostic("sanitize-sampled", Severity.INFO, msg, _anchor(func), kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _finding(func: N.PrimFunc, site, row: list[int], shapes: dict, sources: dict) -> Diagnostic:
    buf, extra = site.buffer, ()  # extra: related spans naming the index table a write's index was read from
    rank = max(len(buf.shape), 1)
    element = f"{buf.name}[{', '.join(str(i) for i in row[5:5 + min(rank, 4)])}]"
    where = _where(site.block_names, row[1:4], row[4])
    if site.code == "sanitize-uninitialized-read":
        reader = "this line reads" if site.construct == "element" else f"{site.construct} here reads"
        fix = (f"drop {buf.name} from out_idx and pass a zeroed tensor, or write it before reading it"
               if buf.scope == "global" else f"initialise {buf.name} first (T.clear / T.fill, a T.copy into it, or "
               "assignments before the loop that reads it)")
        msg = (f"{reader} {element} ({_scope(buf)}) before anything wrote it ({where}), so it gets whatever the "
               f"memory held; {fix}")
    elif site.code == "sanitize-reduction-step":
        return _step_finding(func, site, row, where)
    elif site.code == "sanitize-inplace-hazard":
        return _hazard_finding(func, site, row, where, element)
    elif site.code == "sanitize-index-overflow":
        expr, what = site.detail
        value = row[5] * 2**31 + row[6]
        msg = (f"{expr} reached {value:,} ({where}), beyond int32 (-2,147,483,648 .. 2,147,483,647); {what} is "
               "computed in 32 bits and wrapped around, so the addresses built from it are wrong; compute it in 64 "
               "bits (T.cast(..., T.int64) on the first operand) or keep the offset inside a buffer index")
        return Diagnostic(site.code, Severity.ERROR, msg, site.span or _anchor(func), kernel=func.name,
                          instance=func.instance or None, target="cpu")
    elif site.code == "sanitize-block-race":
        other = _where(site.block_names, row[9:12], -1)
        use = scatter_use(func, buf, site.span)
        if use is not None:  # the index came from a table: the table repeats an entry (or the kernel reads it wrong)
            table = use.param.name
            fix = (f"the write's index comes from {table} ({_provenance(use, sources)}), which gives "
                   f"both blocks the same position: a scatter needs distinct {table} entries, so check the index "
                   f"expression that reads {table} and how the table is built, or accumulate with T.atomic_add if "
                   "entries may repeat")
            extra = _table_related(use)
        else:
            fix = (f"index {buf.name} with the block indices so each block writes its own part, or accumulate with "
                   "T.atomic_add into a zeroed tensor")
        msg = (f"{other.replace('first in ', '')} and {where.replace('first in ', '')} both write {element} "
               f"without an atomic, so the result depends on which block runs last; {fix}")
    else:
        shape = shapes.get(buf) or tuple(as_int(d) for d in buf.shape)
        dims = f" of shape ({', '.join(str(d) for d in shape)})" if None not in shape else ""
        msg = (f"{element} is outside {buf.name}{dims} ({_scope(buf)}, {where}); TileLang does not guard it, so "
               "on a GPU this reads or overwrites the neighbouring memory or registers: guard the access, size the "
               "buffer for it, or fix the index expression")
    related = (Related(buf.span, f"'{buf.name}' is declared here"),) if buf.span is not None else ()
    at = site.span or _anchor(func)
    if extra:  # the cause is the index read from the table, not the write
        at, related = extra[0].span, (Related(at, f"'{buf.name}' is written here"),) + related
    return Diagnostic(site.code, Severity.ERROR, msg, at, related, kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _step_finding(func: N.PrimFunc, site, row: list[int], where: str) -> Diagnostic:
    buf, (loop, axis) = site.buffer, site.detail
    rank = max(len(buf.shape), 1)
    start, prev, extent = row[5 + axis], row[9], row[10]
    first, second = sorted((prev, start))  # the two tiles along the axis, lower one first
    if second - first > extent:
        lost = (f"so {buf.name}{_axis_slice(rank, axis, first + extent, second)} is never read (part of the sum is "
                "skipped)")
    else:
        lost = f"so {buf.name}{_axis_slice(rank, axis, second, first + extent)} is read twice (summed twice)"
    msg = (f"T.copy here reads {buf.name} at offset {prev} and then {start} along axis {axis} in consecutive "
           f"iterations of the `{loop}` loop ({where}), but the tile holds {extent} along that axis, {lost}; step "
           f"the offset by the tile's extent ({loop} * {extent}) and loop T.ceildiv(size, {extent}) times")
    related = (Related(buf.span, f"'{buf.name}' is declared here"),) if buf.span is not None else ()
    return Diagnostic(site.code, Severity.ERROR, msg, site.span or _anchor(func), related, kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _axis_slice(rank: int, axis: int, lo: int, hi: int) -> str:
    return "[" + ", ".join(f"{lo}:{hi}" if d == axis else ":" for d in range(rank)) + "]"


def _hazard_finding(func: N.PrimFunc, site, row: list[int], where: str, element: str) -> Diagnostic:
    buf, kind, spans = site.buffer, site.detail[0], site.detail[1:]
    other = _where(site.block_names, row[9:12], -1).replace("first in ", "")
    me = where.replace("first in ", "")
    lines = ", ".join(str(s.line) for s in spans)
    by = f" (line{'s' if len(spans) > 1 else ''} {lines})" if spans else ""
    if kind == "read":
        msg = (f"{me} reads {element}, which {other} of the same launch wrote{by} without an atomic: on a GPU "
               f"whether it sees the old or the new value depends on the order the blocks run in; write the result "
               f"into a separate output tensor instead of {buf.name}")
    else:
        msg = (f"{me} overwrites {element}, which {other} of the same launch read{by}: on a GPU that block may see the "
               f"old or the new value, depending on the order the blocks run in; write the result into a separate "
               f"output tensor instead of {buf.name}")
    verb = "written" if kind == "read" else "read"
    related = tuple(Related(s, f"'{buf.name}' is {verb} here") for s in spans)
    return Diagnostic(site.code, Severity.ERROR, msg, site.span or _anchor(func), related, kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _where(names, coords: list[int], thread: int) -> str:
    names = list(names)[:3]
    block = ", ".join(f"{n}={c}" for n, c in zip(names, coords)) if names else "the kernel"
    return f"first in block ({block})" + (f", thread {thread}" if thread >= 0 else "")


def _scope(buf: N.Buffer) -> str:
    return {"local.fragment": "a fragment", "shared": "shared memory", "shared.dyn": "shared memory",
            "local": "a local buffer", "local.var": "a local variable"}.get(buf.scope, "an out_idx output, allocated "
                                                                            "fresh on every call")


def _anchor(func: N.PrimFunc) -> Span:
    launch = func.launch
    at = launch.span if launch is not None else None
    return at or func.name_span or func.span or Span(1, 0, 1, 0)


def _coverage(func: N.PrimFunc, param: N.Buffer, writer, sources: dict) -> list[Diagnostic]:
    """One diagnostic per output with elements no block wrote, naming the rows / columns / ranges: at the statement
    that writes the output when only one does (else the launch)."""
    missing = writer == 0
    count = int(missing.sum())
    if count == 0:
        return []
    sites = write_sites(func, param)
    use = scatter_use(func, param)
    if count == missing.numel():
        msg = (f"no block writes any element of output '{param.name}', so it keeps whatever the fresh allocation "
               f"held; write the result into {param.name} (e.g. T.copy the tile into it), or drop it from out_idx")
    elif use is not None:
        msg = (f"{count} of {missing.numel()} elements of output '{param.name}' are never written by any block "
               f"({describe_region(missing, param.name)}), so they keep whatever the fresh allocation held; the "
               f"positions written come from {use.param.name} ({_provenance(use, sources)}), whose "
               f"entries do not reach them: check the index expression that reads {use.param.name}, or zero "
               f"{param.name} first if a table may leave rows out")
    else:
        msg = (f"{count} of {missing.numel()} elements of output '{param.name}' are never written by any block "
               f"({describe_region(missing, param.name)}), so they keep whatever the fresh allocation held; size "
               "the grid with T.ceildiv(size, tile) so it covers the tensor, and index each axis with its own block "
               "index")
    related = (Related(param.span, f"'{param.name}' is an out_idx output"),) if param.span is not None else ()
    related = (_table_related(use) if use is not None and count != missing.numel() else ()) + related
    at = sites[0] if len(sites) == 1 else _anchor(func)
    return [Diagnostic("sanitize-unwritten-output", Severity.ERROR, msg, at, related, kernel=func.name,
                       instance=func.instance or None, target="cpu")]


def _provenance(use, sources: dict) -> str:
    """Where an index is read from its table, and where the table's values came from, in words."""
    name = use.param.name
    values = f"values: {sources[name]}" if name in sources else "values: random integers"
    return f"read at line {use.read_at.line}; {values}" if use.read_at is not None else values


def _table_related(use) -> tuple:
    at = use.read_at
    return (Related(at, f"the index is read from '{use.param.name}' here"),) if at is not None else ()


def describe_region(missing, name: str) -> str:
    """Where a boolean mask is set, in words: whole rows, whole columns, or a bounding box."""
    if missing.dim() == 1:
        return f"{name}[{_runs(missing)}]"
    rows = missing.flatten(1).all(1)
    cols = missing.flatten(0, -2).all(0)
    parts = []
    if bool(rows.any()):
        parts.append(f"rows {_runs(rows)} of {missing.shape[0]}")
    if bool(cols.any()):
        parts.append(f"columns {_runs(cols)} of {missing.shape[-1]}")
    if parts and bool((missing == _cover(missing, rows, cols)).all()):
        return " and ".join(parts)
    first = [int(i) for i in missing.nonzero()[0]]
    box = [f"{int(ax.nonzero()[0])}..{int(ax.nonzero()[-1])}" for ax in _axes(missing)]
    return f"first {name}[{', '.join(map(str, first))}], within {name}[{', '.join(box)}]"


def _cover(missing, rows, cols):
    shape = missing.shape
    r = rows.view(shape[0], *([1] * (len(shape) - 1))).expand(shape)
    c = cols.view(*([1] * (len(shape) - 1)), shape[-1]).expand(shape)
    return r | c


def _axes(missing) -> list:
    out = []
    for d in range(missing.dim()):
        other = [k for k in range(missing.dim()) if k != d]
        out.append(missing.permute(d, *other).flatten(1).any(1))
    return out


def _runs(mask) -> str:
    """`a..b, c..d` for the set positions of a 1-D mask (the first MAX_RUNS runs, then how many more)."""
    idx = [int(i) for i in mask.nonzero().flatten()]
    runs, start = [], idx[0]
    for prev, cur in zip(idx, idx[1:] + [None]):
        if cur != prev + 1 if cur is not None else True:
            runs.append(str(start) if start == prev else f"{start}..{prev}")
            start = cur
    more = f" and {len(runs) - MAX_RUNS} more ranges" if len(runs) > MAX_RUNS else ""
    return ", ".join(runs[:MAX_RUNS]) + more


def finding_dict(d: Diagnostic) -> dict:
    """A finding as JSON (1-based lines and columns, end exclusive), as `tilelsp verify --json` prints it."""
    def at(span: Span) -> dict:
        return {"line": span.line, "column": span.col + 1, "end_line": span.end_line, "end_column": span.end_col + 1}

    return {**at(d.span), "code": d.code, "severity": d.severity.value, "message": d.message, "kernel": d.kernel,
            "instance": d.instance, "related": [{**at(r.span), "message": r.message} for r in d.related]}


def finding_from_dict(obj: dict) -> Diagnostic:
    """The Diagnostic back from `finding_dict`."""
    def span(o: dict) -> Span:
        return Span(o["line"], o["column"] - 1, o["end_line"], o["end_column"] - 1)

    return Diagnostic(obj["code"], Severity(obj.get("severity", "error")), obj["message"], span(obj),
                      tuple(Related(span(r), r["message"]) for r in obj.get("related") or ()),
                      kernel=obj.get("kernel"), instance=obj.get("instance"), target="cpu")
