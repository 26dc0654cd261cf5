import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { kernelAtLine, orderKernels, parseCommandTarget } from '../src/commandArgs';
import { irUri } from '../src/irDocument';
import type { KernelInfo } from '../src/protocol';

const file = 'file:///w/gemm.py';
const kernel = (name: string, start: number, end: number): KernelInfo => ({
  name,
  range: { start: { line: start, character: 0 }, end: { line: end, character: 0 } },
});

describe('command arguments', () => {
  it('takes [uri, kernel] from a code lens', () => {
    expect(parseCommandTarget([file, 'matmul'])).toEqual({ uri: file, kernel: 'matmul' });
  });

  it('takes a vscode.Uri (editor menus) and ignores non-kernel second arguments', () => {
    const uri = vscode.Uri.parse(file);
    expect(parseCommandTarget([uri, { groupId: 1 }])).toEqual({ uri: uri.toString() });
  });

  it('accepts an object with uri and kernel', () => {
    expect(parseCommandTarget([{ uri: file, kernel: 'k' }])).toEqual({ uri: file, kernel: 'k' });
  });

  it('uses the active editor from the palette', () => {
    const active = vscode.Uri.parse(file);
    expect(parseCommandTarget([], active)).toEqual({ uri: active.toString() });
    expect(parseCommandTarget([undefined, undefined], active)).toEqual({ uri: active.toString() });
    expect(parseCommandTarget([])).toBeUndefined();
    expect(parseCommandTarget([42, null])).toBeUndefined();
  });

  it('maps an IR view to its source file and kernel', () => {
    const view = irUri({ source: file, kernel: 'attn', stage: 'cuda', target: 'sm_90a' });
    expect(parseCommandTarget([], view)).toEqual({ uri: file, kernel: 'attn' });
    expect(parseCommandTarget([view])).toEqual({ uri: file, kernel: 'attn' });
  });

  it('finds the innermost kernel at a line and orders kernels for a pick', () => {
    const outer = kernel('outer', 0, 50);
    const inner = kernel('inner', 10, 20);
    const last = kernel('last', 60, 70);
    expect(kernelAtLine([outer, inner, last], 15)?.name).toBe('inner');
    expect(kernelAtLine([outer, inner, last], 55)?.name).toBe('inner');
    const headers = [kernel('a', 10, 10), kernel('b', 40, 40)];
    expect(kernelAtLine(headers, 25)?.name).toBe('a');
    expect(kernelAtLine(headers, 41)?.name).toBe('b');
    expect(kernelAtLine(headers, 3)).toBeUndefined();
    expect(orderKernels([last, outer, inner], 65).map((k) => k.name)).toEqual(['last', 'outer', 'inner']);
    expect(orderKernels([last, inner, outer]).map((k) => k.name)).toEqual(['outer', 'inner', 'last']);
  });
});
