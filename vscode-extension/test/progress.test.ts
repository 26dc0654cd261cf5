import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { ProgressRouter, showServerProgress } from '../src/progress';
import type { ProgressToken, ProgressValue } from '../src/protocol';
import * as stub from './stub/vscode';

function link() {
  const handlers = new Map<ProgressToken, (v: ProgressValue) => void>();
  const notes: [string, unknown][] = [];
  return {
    handlers,
    notes,
    notify: async (method: string, params: unknown) => void notes.push([method, params]),
    onProgress: (token: ProgressToken, handler: (v: ProgressValue) => void) => {
      handlers.set(token, handler);
      return { dispose: () => handlers.delete(token) };
    },
  };
}

beforeEach(() => stub.__test.reset());

describe('server-created progress', () => {
  it('goes to the newest claim, and to nobody after the claims are disposed', () => {
    const router = new ProgressRouter();
    const l = link();
    const a: string[] = [];
    const b: string[] = [];
    const first = router.claim((v) => a.push(v.message ?? ''));
    const second = router.claim((v) => b.push(v.message ?? ''));
    expect(router.created(1, l)).toBe(true);
    l.handlers.get(1)?.({ kind: 'report', message: 'x' });
    expect([a, b]).toEqual([[], ['x']]);
    expect(second.tokens).toEqual([1]);
    second.dispose();
    expect(l.handlers.has(1)).toBe(false);
    expect(router.created(2, l)).toBe(true);
    expect(first.tokens).toEqual([2]);
    first.dispose();
    expect(router.created(3, l)).toBe(false);
  });

  it('declines a token that already has a listener instead of failing the server request', () => {
    const router = new ProgressRouter();
    const claim = router.claim(() => undefined);
    const busy = { onProgress: () => { throw new Error('Progress handler for token t already registered'); } };
    expect(router.created('t', busy)).toBe(false);
    expect(claim.tokens).toEqual([]);
  });

  it('shows unclaimed progress as a cancellable notification that ends with the server', async () => {
    const l = link();
    const withProgress = vi.spyOn(vscode.window, 'withProgress');
    showServerProgress(l, 'tok');
    l.handlers.get('tok')?.({ kind: 'begin', title: 'Lowering', cancellable: true, message: 'gemm' });
    expect(withProgress.mock.calls[0][0]).toMatchObject({ title: 'Lowering', cancellable: true });
    l.handlers.get('tok')?.({ kind: 'report', message: 'cuda' });
    expect(stub.progressReports).toEqual([{ message: 'gemm' }, { message: 'cuda' }]);
    stub.progressTokens[0].cancel();
    expect(l.notes).toEqual([['window/workDoneProgress/cancel', { token: 'tok' }]]);
    l.handlers.get('tok')?.({ kind: 'end' });
    await withProgress.mock.results[0].value;
    expect(l.handlers.has('tok')).toBe(false);
  });
});
