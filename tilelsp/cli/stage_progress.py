"""Stage progress of a lowering on stderr: one line rewritten in place on a terminal, one line per stage otherwise
(`--progress` in a log); stdout stays the command's output only."""
from __future__ import annotations

import sys
import time


class StageProgress:
    """`done(stage)` after each stage; `finish(note)` ends the line. Silent unless `enabled`."""

    def __init__(self, label: str, stages: tuple[str, ...], enabled: bool, stream=None):
        self.label, self.stages, self.enabled = label, stages, enabled
        self.stream = stream or sys.stderr
        self.live = enabled and self.stream.isatty()  # rewrite one line; else a line per stage
        self.start = time.perf_counter()
        self._write(f"{label}: {stages[0]}…")

    def _write(self, text: str, end: bool = False) -> None:
        if not self.enabled:
            return
        if self.live:
            self.stream.write("\r\033[K" + text + ("\n" if end else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, stage: str) -> None:
        """A stage's text is ready: say so, and name the next stage (now running)."""
        k = self.stages.index(stage) + 1 if stage in self.stages else 0
        elapsed = time.perf_counter() - self.start
        upcoming = f", now {self.stages[k]}…" if 0 < k < len(self.stages) else ""
        self._write(f"{self.label}: {stage} done ({k}/{len(self.stages)}, {elapsed:.1f} s){upcoming}")

    def finish(self, note: str) -> None:
        """The closing line (`note`: e.g. 'from the cache'), with the total time."""
        self._write(f"{self.label}: {note} in {time.perf_counter() - self.start:.1f} s", end=True)
