/** Source ↔ generated-code line maps: which generated lines belong to the statement under the cursor, and back. */

import type { LineMapEntry } from './protocol';

export interface LineSpan {
  /** 0-based first line. */
  start: number;
  /** 0-based last line, inclusive. */
  end: number;
}

/** Restrict the fallback search to a kernel's lines (0-based, inclusive). */
export interface LineWindow {
  start: number;
  end: number;
}

function sortedUnique(lines: Iterable<number>): number[] {
  return [...new Set(lines)].filter((n) => Number.isInteger(n) && n >= 0).sort((a, b) => a - b);
}

/** Collect the generated lines for one source line. */
function linesAt(map: readonly LineMapEntry[], sourceLine: number): number[] {
  return map.filter((e) => e.source === sourceLine).flatMap((e) => e.lines ?? []);
}

/**
 * Generated lines for the statement at `sourceLine`: the lines mapped from it, else (a continuation line of a
 * multi-line statement) those of the nearest mapped line above it inside `window`.
 */
export function generatedLinesFor(map: readonly LineMapEntry[], sourceLine: number, window?: LineWindow): number[] {
  if (window && (sourceLine < window.start || sourceLine > window.end)) {
    return [];
  }
  const exact = linesAt(map, sourceLine);
  if (exact.length > 0) {
    return sortedUnique(exact);
  }
  const floor = window ? window.start : -Infinity;
  let best = -1;
  for (const e of map) {
    if (e.source < sourceLine && e.source >= floor && e.source > best && (e.lines ?? []).length > 0) {
      best = e.source;
    }
  }
  return best >= 0 ? sortedUnique(linesAt(map, best)) : [];
}

/** Source lines whose generated code includes `generatedLine`. */
export function sourceLinesFor(map: readonly LineMapEntry[], generatedLine: number): number[] {
  return sortedUnique(map.filter((e) => (e.lines ?? []).includes(generatedLine)).map((e) => e.source));
}

/** Merge line numbers into runs of consecutive lines (what an editor decorates as whole-line ranges). */
export function toSpans(lines: readonly number[]): LineSpan[] {
  const spans: LineSpan[] = [];
  for (const line of sortedUnique(lines)) {
    const last = spans[spans.length - 1];
    if (last && line === last.end + 1) {
      last.end = line;
    } else {
      spans.push({ start: line, end: line });
    }
  }
  return spans;
}

/** The kernel's source lines: its reported range widened to every source line its generated code maps from. */
export function kernelWindow(map: readonly LineMapEntry[], range?: LineWindow): LineWindow | undefined {
  const sources = map.filter((e) => (e.lines ?? []).length > 0).map((e) => e.source);
  if (range) {
    sources.push(range.start, range.end);
  }
  return sources.length > 0 ? { start: Math.min(...sources), end: Math.max(...sources) } : undefined;
}

/** Drop entries that point past the end of the generated text (a stale map after an edit). */
export function clampMap(map: readonly LineMapEntry[] | undefined, lineCount: number): LineMapEntry[] {
  return (map ?? [])
    .map((e) => ({ source: e.source, lines: (e.lines ?? []).filter((l) => l >= 0 && l < lineCount) }))
    .filter((e) => e.lines.length > 0);
}
