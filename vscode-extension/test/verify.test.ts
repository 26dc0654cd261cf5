import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { ProgressRouter } from '../src/progress';
import type { ProgressToken, ProgressValue, ServerLink } from '../src/protocol';
import { executeRun, formatResult, runWithProgress, summarize } from '../src/verify';

interface Call {
  method: string;
  params: { command: string; arguments: unknown[]; workDoneToken: string };
}

function fakeLink(answer: (call: Call, emit: (v: ProgressValue) => void) => Promise<unknown>) {
  const calls: Call[] = [];
  const notes: [string, unknown][] = [];
  const handlers = new Map<ProgressToken, (v: ProgressValue) => void>();
  const router = new ProgressRouter();
  const link: ServerLink = {
    notify: async (method, params) => void notes.push([method, params]),
    claimProgress: (sink) => router.claim(sink),
    request: async <R>(method: string, params: unknown) => {
      const call = { method, params: params as Call['params'] };
      calls.push(call);
      const emit = (v: ProgressValue) => handlers.get(call.params.workDoneToken)?.(v);
      return (await answer(call, emit)) as R;
    },
    onProgress: (token, handler) => {
      if (handlers.has(token)) {
        throw new Error(`Progress handler for token ${token} already registered`); // as vscode-jsonrpc does
      }
      handlers.set(token, handler);
      return { dispose: () => handlers.delete(token) };
    },
  };
  return { link, calls, handlers, router, notes };
}

const ok = { passed: true, maxAbsErr: 0.00012, maxRelErr: 0.0021, timeMs: 0.5123, device: 'cuda:0 (NVIDIA H200)', message: '' };

describe('verify and benchmark', () => {
  it('calls the server command with [uri, kernel] and a work-done token, forwarding progress', async () => {
    const { link, calls, handlers } = fakeLink(async (_c, emit) => {
      emit({ kind: 'begin', title: 'Verify' });
      emit({ kind: 'report', message: 'compiling', percentage: 30 });
      emit({ kind: 'end' });
      return ok;
    });
    const seen: string[] = [];
    const cts = new vscode.CancellationTokenSource();
    const outcome = await executeRun(link, 'benchmark', 'file:///g.py', 'matmul', cts.token, (m) => seen.push(m));
    expect(calls[0].method).toBe('workspace/executeCommand');
    expect(calls[0].params.command).toBe('tilelsp.server.benchmark');
    expect(calls[0].params.arguments).toEqual(['file:///g.py', 'matmul']);
    expect(calls[0].params.workDoneToken).toMatch(/^vscode-benchmark-\d+-\d+$/);
    expect(seen).toEqual(['Verify', 'compiling']);
    expect(outcome).toEqual({ status: 'done', result: ok });
    expect(handlers.size).toBe(0);
  });

  it('returns at once when cancelled, even if the server is slow to answer', async () => {
    const { link } = fakeLink(() => new Promise(() => undefined));
    const cts = new vscode.CancellationTokenSource();
    const pending = executeRun(link, 'verify', 'file:///g.py', 'k', cts.token, () => undefined);
    cts.cancel();
    expect(await pending).toEqual({ status: 'cancelled' });
  });

  it('takes progress the server creates itself into the same notification, and cancels it there', async () => {
    let serverToken: ProgressToken = '';
    const fake = fakeLink((_c, _emit) => new Promise(() => undefined));
    const seen: string[] = [];
    const cts = new vscode.CancellationTokenSource();
    const pending = executeRun(fake.link, 'verify', 'file:///g.py', 'k', cts.token, (m) => seen.push(m));
    serverToken = 'tilelsp-verify-7';
    expect(fake.router.created(serverToken, fake.link)).toBe(true);
    fake.handlers.get(serverToken)?.({ kind: 'begin', title: 'Verify k', message: 'running in a subprocess' });
    expect(seen).toEqual(['running in a subprocess']);
    cts.cancel();
    expect(await pending).toEqual({ status: 'cancelled' });
    expect(fake.notes).toEqual([['window/workDoneProgress/cancel', { token: 'tilelsp-verify-7' }]]);
    expect(fake.handlers.has(serverToken)).toBe(false);
    expect(fake.router.created('later', fake.link)).toBe(false);
  });

  it('reports request errors as failures', async () => {
    const { link } = fakeLink(async () => {
      throw new Error('worker timed out');
    });
    const outcome = await executeRun(link, 'verify', 'file:///g.py', 'k', new vscode.CancellationTokenSource().token, () => undefined);
    expect(outcome).toEqual({ status: 'failed', error: 'worker timed out' });
  });

  it('formats results for the output channel', () => {
    const when = new Date('2026-01-02T03:04:05Z');
    const lines = formatResult('verify', 'matmul', 'gemm.py', { status: 'done', result: ok }, when);
    expect(lines[0]).toBe('[2026-01-02T03:04:05.000Z] verify matmul (gemm.py): Verify matmul: passed, on cuda:0 (NVIDIA H200), 0.512 ms');
    expect(lines).toContain('  max abs err  1.20e-4');
    expect(lines).toContain('  max rel err  0.002');
    expect(formatResult('verify', 'k', 'f.py', { status: 'cancelled' }, when)).toEqual(['[2026-01-02T03:04:05.000Z] verify k (f.py): cancelled']);
    expect(summarize('verify', 'k', { passed: false, device: 'cpu' })).toBe('Verify k: FAILED, on cpu');
  });

  it('writes the result to the output channel under a progress notification', async () => {
    const { link } = fakeLink(async () => ({ ...ok, passed: false, message: 'max abs err 3.1 > atol 0.01' }));
    const out = vscode.window.createOutputChannel('t') as unknown as vscode.OutputChannel & { lines: string[] };
    const outcome = await runWithProgress(link, 'verify', 'file:///w/gemm.py', 'matmul', out);
    expect(outcome.status).toBe('done');
    expect(out.lines[0]).toContain('verify matmul (gemm.py): Verify matmul: FAILED');
    expect(out.lines).toContain('  max abs err 3.1 > atol 0.01');
  });
});
