import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { failureText, IrDocumentProvider, irUri } from '../src/irDocument';
import type { ServerLink } from '../src/protocol';
import * as stub from './stub/vscode';

const file = 'file:///w/gemm.py';
let answers: (() => Promise<unknown>)[] = [];
const link: ServerLink = {
  request: <R>() => (answers.shift() ?? (() => Promise.reject(new Error('no answer'))))() as Promise<R>,
  notify: async () => undefined,
  onProgress: () => ({ dispose: () => undefined }),
};
let provider: IrDocumentProvider;
const token = () => new vscode.CancellationTokenSource().token;

beforeEach(() => {
  stub.__test.reset();
  answers = [];
  provider = new IrDocumentProvider(() => link);
});
afterEach(() => provider.dispose());

describe('IR document provider', () => {
  it('returns the server text and keeps the answer for the line map', async () => {
    const uri = irUri({ source: file, kernel: 'k', stage: 'cuda' });
    answers.push(async () => ({ text: 'extern "C" __global__ void k() {}', languageId: 'cuda', stage: 'cuda', kernel: 'k', lineMap: [{ source: 3, lines: [0] }] }));
    expect(await provider.provideTextDocumentContent(uri, token())).toBe('extern "C" __global__ void k() {}\n');
    expect(provider.result(uri)?.lineMap).toEqual([{ source: 3, lines: [0] }]);
  });

  it('shows the server error as a comment in the view', async () => {
    const uri = irUri({ source: file, kernel: 'k', stage: 'layouts' });
    answers.push(async () => {
      throw new Error("no kernel named 'k' in this file");
    });
    const text = await provider.provideTextDocumentContent(uri, token());
    expect(text).toBe("# Could not produce the layouts stage of kernel k:\n# no kernel named 'k' in this file\n");
    expect(provider.result(uri)).toBeUndefined();
    expect(failureText({ source: file, kernel: 'k', stage: 'cuda' }, 'x')).toMatch(/^\/\/ Could not/);
    expect(failureText({ source: file, kernel: 'k', stage: 'llvm' }, 'x')).toMatch(/^; Could not/);
  });

  it('says when the server is not running', async () => {
    const idle = new IrDocumentProvider(() => undefined);
    expect(await idle.provideTextDocumentContent(irUri({ source: file, kernel: 'k', stage: 'tir' }), token())).toContain('not running');
    idle.dispose();
  });

  it('refreshes the open views of a file when it is saved, and only those', async () => {
    const mine = irUri({ source: file, kernel: 'k', stage: 'cuda' });
    const other = irUri({ source: 'file:///w/other.py', kernel: 'k', stage: 'cuda' });
    stub.workspace.textDocuments.push(new stub.TextDocument(mine as any), new stub.TextDocument(other as any), new stub.TextDocument(vscode.Uri.parse(file) as any));
    const fired: string[] = [];
    provider.onDidChange((u) => fired.push(u.toString()));
    stub.__test.fireSave(new stub.TextDocument(vscode.Uri.parse(file) as any));
    expect(fired).toEqual([mine.toString()]);
    provider.refreshAll();
    expect(fired).toHaveLength(3);
  });
});
