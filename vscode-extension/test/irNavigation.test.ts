import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { IrDocumentProvider, irUri } from '../src/irDocument';
import { hoverMarkdown, IrNavigation } from '../src/irNavigation';
import type { ServerLink } from '../src/protocol';
import * as stub from './stub/vscode';

const file = 'file:///w/gemm.py';
const link: ServerLink = {
  request: async <R>() => ({ text: 'l0\nl1\nl2\nl3', languageId: 'cuda', stage: 'cuda', kernel: 'k', lineMap: [{ source: 2, lines: [1, 2] }, { source: 4, lines: [2] }] }) as R,
  notify: async () => undefined,
  onProgress: () => ({ dispose: () => undefined }),
};
let provider: IrDocumentProvider;

beforeEach(() => {
  stub.__test.reset();
  provider = new IrDocumentProvider(() => link);
});
afterEach(() => provider.dispose());

async function view(): Promise<stub.TextDocument> {
  const uri = irUri({ source: file, kernel: 'k', stage: 'cuda' });
  const text = await provider.provideTextDocumentContent(uri, new vscode.CancellationTokenSource().token);
  return new stub.TextDocument(uri as unknown as stub.Uri, text, 'cuda-cpp');
}

describe('navigation from generated code', () => {
  it('hovers with the source lines behind a CUDA line', async () => {
    stub.workspace.textDocuments.push(new stub.TextDocument(vscode.Uri.parse(file) as unknown as stub.Uri, 'a\nb\n    T.clear(C)\nc\n    T.gemm(A, B, C)\n'));
    const hover = new IrNavigation(provider).provideHover((await view()) as never, new vscode.Position(2, 0)) as unknown as stub.Hover;
    expect(hover.contents.value).toBe('From `gemm.py` lines 3, 5\n\n```python\nT.clear(C)\nT.gemm(A, B, C)\n```');
    expect(new IrNavigation(provider).provideHover((await view()) as never, new vscode.Position(0, 0))).toBeUndefined();
  });

  it('goes to the source line from a CUDA line', async () => {
    const locations = new IrNavigation(provider).provideDefinition((await view()) as never, new vscode.Position(1, 3)) as unknown as stub.Location[];
    expect(locations.map((l) => [l.uri.toString(), (l.range as stub.Position).line])).toEqual([[file, 2]]);
  });

  it('names the lines even when the source is not open', () => {
    expect(hoverMarkdown('gemm.py', [9], () => undefined)).toBe('From `gemm.py` line 10');
  });
});
