import { describe, expect, it } from 'vitest';
import { clampMap, generatedLinesFor, kernelWindow, sourceLinesFor, toSpans } from '../src/lineMap';

const map = [
  { source: 10, lines: [40, 41, 42] },
  { source: 12, lines: [50] },
  { source: 12, lines: [52, 51] },
  { source: 20, lines: [60, 61] },
  { source: 22, lines: [] },
];

describe('line map', () => {
  it('returns the generated lines of the statement under the cursor, sorted', () => {
    expect(generatedLinesFor(map, 12)).toEqual([50, 51, 52]);
    expect(generatedLinesFor(map, 10)).toEqual([40, 41, 42]);
  });

  it('uses the nearest mapped line above for a continuation line, inside the kernel window', () => {
    expect(generatedLinesFor(map, 11)).toEqual([40, 41, 42]);
    expect(generatedLinesFor(map, 23, { start: 15, end: 30 })).toEqual([60, 61]);
    expect(generatedLinesFor(map, 16, { start: 15, end: 30 })).toEqual([]);
    expect(generatedLinesFor(map, 12, { start: 15, end: 30 })).toEqual([]);
    expect(generatedLinesFor(map, 5)).toEqual([]);
  });

  it('widens a header-only kernel range to the lines its code maps from', () => {
    expect(kernelWindow(map, { start: 8, end: 8 })).toEqual({ start: 8, end: 20 });
    expect(kernelWindow(map)).toEqual({ start: 10, end: 20 });
    expect(kernelWindow([], { start: 3, end: 4 })).toEqual({ start: 3, end: 4 });
    expect(kernelWindow([])).toBeUndefined();
    expect(generatedLinesFor(map, 21, kernelWindow(map, { start: 8, end: 8 }))).toEqual([]);
    expect(generatedLinesFor(map, 13, kernelWindow(map, { start: 8, end: 8 }))).toEqual([50, 51, 52]);
  });

  it('maps a generated line back to its source lines', () => {
    expect(sourceLinesFor(map, 51)).toEqual([12]);
    expect(sourceLinesFor([...map, { source: 3, lines: [51] }], 51)).toEqual([3, 12]);
    expect(sourceLinesFor(map, 99)).toEqual([]);
  });

  it('merges lines into whole-line spans', () => {
    expect(toSpans([52, 50, 51, 60, 62, 62])).toEqual([
      { start: 50, end: 52 },
      { start: 60, end: 60 },
      { start: 62, end: 62 },
    ]);
    expect(toSpans([])).toEqual([]);
  });

  it('drops lines past the end of the generated text', () => {
    expect(clampMap(map, 51)).toEqual([
      { source: 10, lines: [40, 41, 42] },
      { source: 12, lines: [50] },
    ]);
    expect(clampMap(undefined, 10)).toEqual([]);
  });
});
