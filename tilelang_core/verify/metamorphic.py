"""Oracles that need no reference (`verify --metamorphic`): a correct tiled kernel computes the same function at
every valid tile, stage and thread configuration, and a row of its output does not change when only other rows of
its inputs change. Both run the kernel on the CPU backend on the same inputs and compare, with the dtype's
tolerance; a disagreement is a finding naming the parameter (or the rows), the output region and the line."""
from __future__ import annotations

import ast
import dataclasses
import re

from ..diagnostics import Diagnostic, Related, Severity
from ..ir import nodes as N
from ..source import Span
from .attribution import suspects
from .index_uses import write_sites

MAX_VARIANTS = 3  # configurations tried besides the instance's own (each is one CPU build and run)
KNOB = re.compile(r"^(block|blk|tile|bm|bn|bk)(_?[A-Za-z0-9]*)$|^(num_)?stages$|^(num_)?threads$|^thread_num$",
                  re.IGNORECASE)
ROW_BLOCK = 8  # the perturbed rows: 1/ROW_BLOCK of axis 0, starting halfway
# check areas whose errors at another configuration mean the instance is right only because sizes agree (resource,
# structure and frontend errors are limits of that configuration, not of the kernel's logic)
REVEALING_AREAS = ("dataflow", "indexing", "copy", "gemm", "reduce")
LITERALS = (int, float, bool, str, tuple, type(None))  # factory arguments a configuration can be rebuilt from


@dataclasses.dataclass(frozen=True)
class Variant:
    """One other configuration: the factory keywords that change (name -> value) and how it was chosen."""

    changes: tuple[tuple[str, object], ...]
    origin: str

    def label(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.changes)


def knobs(func: N.PrimFunc) -> dict:
    """The instance's tile, stage and thread keyword arguments (name -> int value)."""
    return {k: v for k, v in func.bindings if KNOB.match(k) and isinstance(v, int) and not isinstance(v, bool)}


def variants(func: N.PrimFunc, factory) -> list[Variant]:
    """Other configurations to run: the factory's autotune configs that differ from the instance, else one change
    of one knob at a time (a block size halved, else doubled; stages 1 or 2; 128 or 256 threads)."""
    mine = dict(func.bindings)
    configs = getattr(factory, "configs", None)
    if isinstance(configs, (list, tuple)):
        out = []
        for config in configs:
            changes = tuple((k, v) for k, v in config.items() if k in mine and mine[k] != v)
            if changes and all(k in mine for k in config if k != "pass_configs"):
                out.append(Variant(changes, "autotune config"))
        if out:
            return out[:MAX_VARIANTS]
    return [Variant(((k, v),), "varied") for k, v in _one_at_a_time(knobs(func))]


def _one_at_a_time(values: dict) -> list[tuple[str, int]]:
    """Candidate (knob, new value) pairs, block sizes first; the caller keeps the first that build."""
    out = []
    for k, v in values.items():
        name = k.lower()
        if "stage" in name:
            out.append((k, 1 if v > 1 else 2))
        elif "thread" in name:
            out.append((k, 256 if v == 128 else 128))
        else:
            out += [(k, v // 2)] if v >= 16 and v % 2 == 0 else []
            out.append((k, v * 2))
    blocks = [c for c in out if "stage" not in c[0].lower() and "thread" not in c[0].lower()]
    return blocks + [c for c in out if c not in blocks]


def config_findings(func: N.PrimFunc, base_func: N.PrimFunc, factory, build, run, base_outputs: list,
                    out_names: list[str], sanitize=None) -> tuple[list, list]:
    """Run the variants (`build(bindings)` -> kernel or an exception, `run(kernel)` -> outputs) and compare each
    output with `base_outputs` (those of `base_func`, the built instance); one finding per output that changed,
    and the labels of the variants that ran. The line: what `sanitize(kernel)` (a sanitized run's findings) finds
    at the first configuration that disagrees, else the statement attribution.py suspects, else the output's
    store."""
    from ..runtime.numerics import compare

    from ..diagnostics import CompileError

    if not all(isinstance(v, LITERALS) for _, v in func.bindings):
        return [], []  # factory arguments only the file's run knows: no configuration can be rebuilt from them
    mine, ran, tried_knobs, rejected = dict(func.bindings), [], set(), []
    changed: dict[str, list] = {}  # output name -> [(variant, comparison, mask, kernel)]
    shapes = [tuple(p.shape) for p in func.params if isinstance(p, N.Buffer)]
    for variant in variants(func, factory):
        knob = variant.changes[0][0]
        if len(variant.changes) == 1 and knob in tried_knobs:
            continue  # a knob's first buildable alternative is enough
        try:
            kernel = build({**mine, **dict(variant.changes)})
        except CompileError as err:  # the checks reject this configuration: why may matter, then try the next one
            rejected += [(variant, d) for d in _revealing(err.diagnostics)][:1]
            continue
        except Exception:  # it does not build: try the next one
            continue
        if [tuple(p.shape) for p in kernel.func.params if isinstance(p, N.Buffer)] != shapes:
            continue  # the knob changes the tensors' shapes: not the same function
        tried_knobs.add(knob)
        ran.append(variant.label())
        for name, base, got in zip(out_names, base_outputs, run(kernel)):
            res = compare(got, base, name=f"output '{name}'", scale_atol=True)
            if not res.passed:
                changed.setdefault(name, []).append((variant, res, _differs(got, base), kernel))
        if len(ran) >= MAX_VARIANTS:
            break
    findings = [_config_finding(func, base_func, name, hits, sanitize) for name, hits in changed.items()]
    return findings + [_coincidence_finding(func, v, d) for v, d in _first_per_line(rejected)], ran


def _revealing(diagnostics) -> list:
    from ..codes import CODES

    return [d for d in diagnostics if d.is_error and d.span is not None
            and getattr(CODES.get(d.code), "area", "") in REVEALING_AREAS]


def _first_per_line(rejected: list) -> list:
    seen, out = set(), []
    for v, d in rejected:
        if d.span.line not in seen:
            seen.add(d.span.line)
            out.append((v, d))
    return out


def _coincidence_finding(func: N.PrimFunc, variant: Variant, d) -> Diagnostic:
    mine = dict(func.bindings)
    what = " and ".join(f"{k} from {mine[k]!r} to {v!r}" for k, v in variant.changes)
    msg = (f"changing {what} ({variant.origin}) makes the checks reject this line ([{d.code}] {d.message}); this "
           f"configuration passes only because its sizes happen to agree, so the statement mixes up two tile or "
           f"problem sizes: use the one that belongs to this axis (it would be wrong as soon as "
           f"{variant.changes[0][0]} changes)")
    return Diagnostic("metamorphic-config-coincidence", Severity.WARNING, msg, d.span, (), kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _differs(got, base):
    """The mask of elements that differ beyond the comparison's tolerance."""
    import torch

    from ..runtime.numerics import tolerance

    rtol, atol = tolerance(str(got.dtype).replace("torch.", ""))
    a, e = got.double(), base.double()
    atol = atol * max(1.0, float(torch.nan_to_num(e.abs(), posinf=0.0).max()))
    diff = torch.nan_to_num((a - e).abs(), nan=float("inf"))
    return diff > atol + rtol * e.abs()


def _config_finding(func: N.PrimFunc, base_func: N.PrimFunc, name: str, hits: list, sanitize) -> Diagnostic:
    from .sanitize import describe_region

    mine = dict(func.bindings)
    variant, res, mask, kernel = hits[0]
    params = [v.changes[0][0] for v, *_ in hits]
    what = "; ".join(", ".join(f"{k} {mine[k]!r} -> {v!r}" for k, v in h[0].changes) + f" ({h[0].origin}): "
                     f"{h[1].mismatched} of {h[1].total} elements differ" for h in hits)
    at, related = _write_site(func, _param(func, name))
    located = _located(sanitize, kernel)
    suspect = next(iter(suspects(base_func, kernel.func)), None) if located is None else None
    if located is not None:
        at, related = located.span, (Related(at, f"'{name}' is written here"),) + related
        where = (f"; at {variant.label()} the sanitizer finds this line's {located.code}: {located.message}")
    elif suspect is not None:
        at, related = suspect.span, (Related(at, f"'{name}' is written here"),) + related
        where = f"; the likely cause is this line: {suspect.reason}"
    else:
        where = (f"; look for an index or loop bound that uses {' or '.join(params)} on an axis it does not tile, "
                 "or a block index paired with the wrong tile size")
    msg = (f"output '{name}' depends on the tile configuration, which a correct tiled kernel does not: {what} "
           f"(first at {variant.label()}: {describe_region(mask, name)}, max abs difference "
           f"{res.max_abs_err:.3g}){where}")
    return Diagnostic("metamorphic-config-mismatch", Severity.ERROR, msg, at, related, kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _located(sanitize, kernel):
    """The first error the sanitizer finds at a disagreeing configuration (it often shows there what the
    instance's own sizes hide), else None."""
    if sanitize is None:
        return None
    try:
        found = sanitize(kernel)
    except Exception:  # the instrumented build may refuse what the plain one takes: no line then
        return None
    return next((d for d in found if d.severity == Severity.ERROR and d.span is not None), None)


def row_axes(func: N.PrimFunc, text: str) -> dict[str, str]:
    """Tensor parameter name -> the name of the dimension its axis 0 spans, read from its annotation
    (`A: T.Tensor((M, K), dtype)` gives A -> "M"), for the tensors whose first dimension is a plain name."""
    lines = text.splitlines()
    out = {}
    for p in func.params:
        if not isinstance(p, N.Buffer) or p.span is None or p.span.line != p.span.end_line:
            continue
        src = lines[p.span.line - 1][p.span.col:p.span.end_col]
        first = _first_dim(src.split(":", 1)[-1])
        if first is not None:
            out[p.name] = first
    return out


def _first_dim(annotation: str) -> str | None:
    try:
        call = ast.parse(annotation.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not call.args:
        return None
    shape = call.args[0]
    if not isinstance(shape, (ast.Tuple, ast.List)) or not shape.elts:
        return None  # a shape held in a variable: its dimensions are not named here
    return shape.elts[0].id if isinstance(shape.elts[0], ast.Name) else None


def row_findings(func: N.PrimFunc, text: str, kernel, args: list, run, base_outputs: list,
                 out_names: list[str], input_positions: dict) -> tuple[list, str]:
    """Perturb one row block of every float input whose axis 0 spans the same dimension as an output's, run
    again, and report output rows outside that block that changed; the findings and what was perturbed ('' when
    the signature gives nothing to perturb)."""
    import torch

    dims = row_axes(func, text)
    findings, what = [], ""
    for name, base in zip(out_names, base_outputs):
        dim = dims.get(name)
        inputs = [p for p, d in dims.items() if d == dim and p != name and p in input_positions
                  and args[input_positions[p]].dtype.is_floating_point]
        rows = base.shape[0] if base.dim() > 1 else 0
        if dim is None or not inputs or rows < 2:
            continue
        lo = rows // 2
        hi = min(rows, lo + max(1, rows // ROW_BLOCK))
        changed = list(args)
        gen = torch.Generator().manual_seed(1)
        for p in inputs:
            k = input_positions[p]
            t = changed[k].clone()
            t[lo:hi] = (torch.rand(t[lo:hi].shape, generator=gen) * 4 - 2).to(t.dtype)
            changed[k] = t
        outs = run(kernel, changed)
        got = outs[out_names.index(name)]
        what = f"rows {lo}..{hi - 1} of {', '.join(inputs)}"
        mask = _differs(got, base)
        mask[lo:hi] = False
        if bool(mask.any()):
            findings.append(_row_finding(func, name, dim, inputs, lo, hi, mask))
    return findings, what


def _row_finding(func: N.PrimFunc, name: str, dim: str, inputs: list, lo: int, hi: int, mask) -> Diagnostic:
    from .sanitize import describe_region

    param = _param(func, name)
    at, related = _write_site(func, param)
    msg = (f"changing only rows {lo}..{hi - 1} of {', '.join(inputs)} (axis 0 spans {dim}, as it does in "
           f"'{name}') changes other rows of output '{name}' ({describe_region(mask, name)}); each output row "
           f"should depend only on its own input rows, so a row index here reads the wrong row (an offset, a "
           "block index or a per-row value taken from another row)")
    return Diagnostic("metamorphic-row-leak", Severity.WARNING, msg, at, related, kernel=func.name,
                      instance=func.instance or None, target="cpu")


def _param(func: N.PrimFunc, name: str) -> N.Buffer | None:
    return next((p for p in func.params if isinstance(p, N.Buffer) and p.name == name), None)


def _write_site(func: N.PrimFunc, param: N.Buffer | None) -> tuple[Span, tuple]:
    """Where a finding about an output points: the statement that writes it when only one does, else the launch."""
    sites = write_sites(func, param) if param is not None else []
    decl = (Related(param.span, f"'{param.name}' is declared here"),) if param is not None and param.span else ()
    if len(sites) == 1:
        return sites[0], decl
    launch = func.launch
    at = (launch.span if launch is not None else None) or func.name_span or func.span or Span(1, 0, 1, 0)
    return at, tuple(Related(s, f"'{param.name}' is written here") for s in sites) + decl
