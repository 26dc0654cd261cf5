"""Names and lines of the emitted TVMScript: unique identifiers, indentation, conditional and spread blocks. Mixed
into KernelEmitter (lower.py), whose `names`, `used_names`, `lines`, `depth` and `threads` they use."""
from __future__ import annotations

import re
from contextlib import contextmanager

from .common import all_of


class TextEmitter:
    """Identifiers and indented lines (methods of KernelEmitter)."""

    def name(self, obj, hint: str | None = None) -> str:
        """A unique TVMScript identifier for a Var or Buffer."""
        if obj in self.names:
            return self.names[obj]
        base = re.sub(r"\W", "_", hint or getattr(obj, "name", "v")) or "v"
        if base[0].isdigit():
            base = "v_" + base
        cand, k = base, 1
        while cand in self.used_names:
            cand, k = f"{base}_{k}", k + 1
        self.used_names.add(cand)
        self.names[obj] = cand
        return cand

    def fresh(self, hint: str) -> str:
        """A new unique identifier."""
        self.counter += 1
        return self.name(object(), hint)

    def line(self, text: str) -> None:
        """One line of TVMScript at the current indentation."""
        self.lines.append("    " * self.depth + text)

    def guarded(self, conds: list[str], text: str) -> None:
        """`text`, under `if` of the conditions when there are any."""
        with self.under(conds):
            self.line(text)

    @contextmanager
    def under(self, conds: list[str]):
        """The lines emitted inside run under `if` of the conditions when there are any (else unconditionally)."""
        if conds:
            self.line(f"if {all_of(conds)}:")
            with self.block():
                yield
        else:
            yield

    @contextmanager
    def spread(self, count: int):
        """The lines emitted inside run once per element `e < count` of a range spread over the block's threads (element
        it * threads + tx in round it); yields the text of `e`."""
        it = self.fresh("it")
        self.line(f"for {it} in T.serial({-(-count // self.threads)}):")
        with self.block():
            e = f"({it} * {self.threads} + tx)"
            self.line(f"if {e} < {count}:")
            with self.block():
                yield e

    def block(self):
        """Context manager that indents the lines emitted inside it."""
        emitter = self

        class _Indent:
            def __enter__(self):
                emitter.depth += 1

            def __exit__(self, *exc):
                emitter.depth -= 1
        return _Indent()
