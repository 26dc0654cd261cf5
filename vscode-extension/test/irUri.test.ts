import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { irUri, showIRParams } from '../src/irDocument';
import { decodeIrUri, editorLanguage, encodeIrUri, stageExtension } from '../src/irUri';

describe('IR URIs', () => {
  const source = 'file:///home/me/my%20kernels/gemm.py';

  it('has a readable path: file, kernel, stage and target', () => {
    const parts = encodeIrUri({ source, kernel: 'matmul', stage: 'cuda', target: 'sm_90a' });
    expect(parts.scheme).toBe('tilelang-ir');
    expect(parts.path).toBe('/gemm/matmul/cuda-sm_90a.cu');
    expect(encodeIrUri({ source, kernel: 'k', stage: 'layouts', instance: 'M=64' }).path).toBe('/gemm/k@M=64/layouts.tileir');
  });

  it('round-trips through a vscode.Uri string (including awkward characters)', () => {
    const req = { source: 'file:///c%3A/dir/a%26b.py?x=1', kernel: 'k/1?#', stage: 'tir', target: 'sm_80', instance: 'M=128, dtype="float16"' };
    const uri = irUri(req);
    const back = vscode.Uri.parse(uri.toString());
    expect(back.scheme).toBe('tilelang-ir');
    expect(decodeIrUri(back)).toEqual(req);
    expect(uri.path).not.toMatch(/[?#]/);
  });

  it('omits absent target and instance', () => {
    const req = { source, kernel: 'k', stage: 'parsed' };
    expect(decodeIrUri(irUri(req))).toEqual(req);
    expect(showIRParams(req)).toEqual({ uri: source, kernel: 'k', stage: 'parsed' });
    expect(showIRParams({ ...req, target: 'cpu', instance: 'i' })).toEqual({ uri: source, kernel: 'k', stage: 'parsed', target: 'cpu', instance: 'i' });
  });

  it('rejects other schemes and incomplete queries', () => {
    expect(decodeIrUri(vscode.Uri.parse('file:///a.py?source=x&kernel=k&stage=s'))).toBeUndefined();
    expect(decodeIrUri({ scheme: 'tilelang-ir', query: 'source=x&kernel=k' })).toBeUndefined();
  });

  it('picks editor languages and extensions per stage', () => {
    expect(stageExtension('cuda')).toBe('.cu');
    expect(stageExtension('llvm')).toBe('.ll');
    expect(stageExtension('pipelined')).toBe('.tileir');
    expect(editorLanguage('cuda', 'cuda')).toBe('cuda-cpp');
    expect(editorLanguage('tvmscript', 'tir')).toBe('tilelang-ir');
    expect(editorLanguage('python', 'parsed')).toBe('tilelang-ir');
    expect(editorLanguage(undefined, 'cuda')).toBe('cuda-cpp');
  });
});
