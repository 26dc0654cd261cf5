"""The inputs a kernel's contract admits: integer tensors it uses as indices (page tables, offsets, lengths) get
values the file gives, never blind random integers. In order: a `# tilelsp: inputs(name=EXPR, ...)` comment, the
tensors the file's own main()/run() passes to the kernel, values inside the ranges the kernel's indexing implies
(distinct values for a table that addresses a tensor the kernel writes: a scatter writes each slot once)."""
from __future__ import annotations

import ast
import re

from ..ir import nodes as N
from .capture import captured_call
from .index_uses import index_params, index_uses, offset_tables

_HINT = re.compile(r"#\s*tilelsp:\s*inputs\s*\((.*)\)\s*$")


def hint_exprs(text: str) -> dict[str, str]:
    """name -> source of each `# tilelsp: inputs(name=EXPR, ...)` keyword in the file's text."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _HINT.search(line)
        if not m:
            continue
        try:
            call = ast.parse(f"f({m.group(1)})", mode="eval").body
        except SyntaxError:
            continue
        for kw in call.keywords:
            if kw.arg:
                out[kw.arg] = ast.unparse(kw.value)
    return out


class InputContract:
    """Index-table values for the kernels of one loaded file (the entry point runs at most once per kernel)."""

    def __init__(self, glb: dict, text: str):
        self.glb = glb
        self.hints = hint_exprs(text)

    def apply(self, kernel, args: list, bindings: dict, seed: int = 0) -> dict[str, str]:
        """Replace, in `args` (the kernel's non-output arguments, in order), the values of the integer tensors the
        kernel uses as indices (or names in a hint); returns name -> where the values came from."""
        import torch

        func = kernel.func
        positions = _input_positions(kernel)
        uses = index_uses(func)
        offsets = offset_tables(func)
        indexed = {u.param for u in uses}
        sources: dict[str, str] = {}
        gen = torch.Generator().manual_seed(seed)
        for p in index_params(func):
            k = positions.get(p.name)
            if k is None or (p not in indexed and p.name not in self.hints):
                continue
            value, sources[p.name] = self._values(kernel, p, args[k], bindings, uses, gen, p in offsets)
            args[k] = value.to(args[k].device)
        return sources

    def _values(self, kernel, p: N.Buffer, current, bindings: dict, uses: list, gen, offsets: bool):
        """The values of one index tensor and a phrase saying where they came from (`offsets`: cumulative, so the
        values from the ranges are sorted, starting at the low end)."""
        if p.name in self.hints:
            return self._hinted(p, current, bindings), f"the `# tilelsp: inputs({p.name}=...)` comment"
        got, entry = self._from_entry(kernel, p, current)
        if got is not None:
            return got, f"what {entry}() passes"
        mine = [u for u in uses if u.param is p]
        low, limit = max(u.low for u in mine), min(u.limit for u in mine)
        scatter = any(u.scatter for u in mine)
        values = _in_range(current, low, max(limit, low + 1), scatter, gen)
        if offsets:
            values = values.flatten().sort().values.reshape(values.shape)
            values.view(-1)[0] = low
        kind = ", distinct" if scatter else ", sorted (cumulative offsets)" if offsets else ""
        return values, f"values in {low}..{max(limit, low + 1) - 1}{kind}, from how the kernel indexes with it"

    def _hinted(self, p: N.Buffer, current, bindings: dict):
        import torch

        ns = {**self.glb, **bindings, "torch": torch}
        try:
            value = eval(self.hints[p.name], ns)  # the user's own expression, as they wrote it in their file
        except Exception as exc:
            raise ValueError(f"`# tilelsp: inputs({p.name}={self.hints[p.name]})` failed: "
                             f"{type(exc).__name__}: {exc}") from None
        if isinstance(value, range):
            return torch.randint(value.start, value.stop, tuple(current.shape)).to(current.dtype)
        t = torch.as_tensor(value).cpu().to(current.dtype)
        if tuple(t.shape) != tuple(current.shape):
            raise ValueError(f"`# tilelsp: inputs({p.name}=...)` gives shape {tuple(t.shape)} but the kernel's "
                             f"'{p.name}' has shape {tuple(current.shape)}")
        return t.clone()

    def _from_entry(self, kernel, p: N.Buffer, current):
        call = captured_call(self.glb, kernel.func.name)
        if call is None:
            return None, ""
        k = _input_positions(kernel, len(call.args)).get(p.name)
        got = call.args[k] if k is not None and k < len(call.args) else None
        if got is None or not hasattr(got, "shape") or tuple(got.shape) != tuple(current.shape):
            return None, call.entry  # the entry point runs another instance: its table does not fit this one
        return got.to(current.dtype).clone(), call.entry


def _input_positions(kernel, n_given: int | None = None) -> dict[str, int]:
    """Parameter name -> position among the arguments a call passes (inputs only, or every parameter)."""
    params = kernel.params
    if n_given is not None and n_given == len(params):
        return {p.name: k for k, p in enumerate(params)}
    inputs = [p for p in params if not p.is_output]
    return {p.name: k for k, p in enumerate(inputs)}


def _in_range(current, low: int, limit: int, distinct: bool, gen):
    import torch

    shape, n = tuple(current.shape), current.numel()
    if distinct and n <= limit - low:
        values = torch.randperm(limit - low, generator=gen)[:n] + low
    else:
        values = torch.randint(low, limit, (n,), generator=gen)
    return values.reshape(shape).to(current.dtype)
