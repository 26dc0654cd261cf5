import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { codeStage, ensureTrusted, pickKernel, runKernel, showCuda, showIR, stagesFor, type CommandContext } from '../src/commands';
import { LineLinker } from '../src/cudaView';
import { IrDocumentProvider } from '../src/irDocument';
import { decodeIrUri } from '../src/irUri';
import type { KernelInfo, ServerLink } from '../src/protocol';
import * as stub from './stub/vscode';

const file = 'file:///w/gemm.py';
const range = (a: number, b: number) => ({ start: { line: a, character: 0 }, end: { line: b, character: 0 } });
const kernels: KernelInfo[] = [
  { name: 'matmul', factory: 'matmul', range: range(5, 30), instances: ['M=1024'], stages: ['parsed', 'lowered', 'cuda'] },
  { name: 'softmax', range: range(40, 60), instances: [], stages: [] },
];

function server() {
  const calls: { method: string; params: any }[] = [];
  const link: ServerLink = {
    request: async <R>(method: string, params: any) => {
      calls.push({ method, params });
      if (method === 'tilelsp/kernels') {
        return { kernels } as R;
      }
      if (method === 'tilelsp/showIR') {
        return { text: `// ${params.kernel} ${params.stage}\nline1\nline2\nline3`, languageId: params.stage === 'cuda' ? 'cuda' : 'python', stage: params.stage, kernel: params.kernel, lineMap: [{ source: 7, lines: [1, 2] }, { source: 9, lines: [3] }] } as R;
      }
      if (method === 'workspace/executeCommand') {
        return { passed: true, timeMs: 1, device: 'cpu' } as R;
      }
      throw new Error(`unexpected ${method}`);
    },
    notify: async () => undefined,
    onProgress: () => ({ dispose: () => undefined }),
  };
  return { link, calls };
}

const live: { dispose(): void }[] = [];

function context(link: ServerLink | undefined): CommandContext {
  const provider = new IrDocumentProvider(() => link);
  const linker = new LineLinker(provider);
  live.push(vscode.workspace.registerTextDocumentContentProvider('tilelang-ir', provider), linker, provider);
  return { link: () => link, provider, linker, results: vscode.window.createOutputChannel('r') };
}

beforeEach(() => stub.__test.reset());
afterEach(() => live.splice(0).forEach((d) => d.dispose()));

describe('kernel and stage choice', () => {
  it('uses a named kernel, the only kernel, or asks with the kernel under the cursor first', async () => {
    expect((await pickKernel(kernels, 'softmax'))?.name).toBe('softmax');
    expect((await pickKernel(kernels, 'unlisted'))?.name).toBe('unlisted');
    expect((await pickKernel([kernels[1]], undefined))?.name).toBe('softmax');
    const pick = vi.spyOn(vscode.window, 'showQuickPick');
    expect((await pickKernel(kernels, undefined, 45))?.name).toBe('softmax');
    const items = pick.mock.calls[0][0] as { label: string; description?: string }[];
    expect(items.map((i) => i.label)).toEqual(['softmax', 'matmul']);
    expect(items[1].description).toBe('in matmul()');
  });

  it('lists the server stages or the defaults for the target', () => {
    expect(stagesFor(kernels[0], 'sm_90a')).toEqual(['parsed', 'lowered', 'cuda']);
    expect(stagesFor(kernels[1], 'sm_80')).toEqual(['parsed', 'legalized', 'pipelined', 'layouts', 'lowered', 'tir', 'cuda']);
    expect(stagesFor(undefined, 'cpu')).toEqual(['parsed', 'legalized', 'tir', 'llvm']);
    expect(codeStage(['parsed', 'tir', 'llvm'])).toBe('llvm');
    expect(codeStage(['cuda', 'tir'])).toBe('cuda');
  });
});

describe('Show IR and Show CUDA', () => {
  it('opens the stage the user picks for a code-lens kernel, with the first target', async () => {
    stub.settingsStore.set('tilelsp.targets', ['sm_80', 'sm_90a']);
    const { link, calls } = server();
    vi.spyOn(vscode.window, 'showQuickPick').mockImplementation(async (items: any) => items[1]);
    const editor = await showIR(context(link), file, 'matmul');
    const req = decodeIrUri(editor!.document.uri);
    expect(req).toEqual({ source: file, kernel: 'matmul', stage: 'lowered', target: 'sm_80' });
    expect(calls.find((c) => c.method === 'tilelsp/showIR')?.params).toEqual({ uri: file, kernel: 'matmul', stage: 'lowered', target: 'sm_80' });
    expect(editor!.document.languageId).toBe('tilelang-ir');
  });

  it('asks which instance when a kernel has several, and passes it to the server', async () => {
    const { link, calls } = server();
    const listed = [{ ...kernels[0], instances: ['matmul(M=64)', 'matmul(M=128)'] }];
    const base = link.request;
    link.request = async <R>(method: string, params: unknown) => (method === 'tilelsp/kernels' ? ({ kernels: listed } as R) : base<R>(method, params));
    const pick = vi.spyOn(vscode.window, 'showQuickPick').mockImplementation(async (items: any) => items[items.length - 1]);
    const editor = await showIR(context(link), file, 'matmul');
    expect(pick.mock.calls[1][0]).toEqual(['matmul(M=64)', 'matmul(M=128)']);
    expect(decodeIrUri(editor!.document.uri)).toMatchObject({ kernel: 'matmul', stage: 'cuda', instance: 'matmul(M=128)' });
    expect(calls.find((c) => c.method === 'tilelsp/showIR')?.params.instance).toBe('matmul(M=128)');
  });

  it('opens the source for the server when the command comes from an IR view whose source is closed', async () => {
    const { link } = server();
    const open = vi.spyOn(vscode.workspace, 'openTextDocument');
    await showIR(context(link), file, 'matmul');
    expect(String(open.mock.calls[0][0])).toBe(file);
    open.mockClear();
    await showIR(context(link), file, 'matmul');
    expect(open.mock.calls.map((c) => String(c[0]))).not.toContain(file);
  });

  it('asks for the kernel from the palette', async () => {
    const { link, calls } = server();
    stub.window.activeTextEditor = new stub.TextEditor(new stub.TextDocument(vscode.Uri.parse(file) as any));
    const editor = await showIR(context(link));
    expect(calls[0]).toEqual({ method: 'tilelsp/kernels', params: { textDocument: { uri: file } } });
    expect(decodeIrUri(editor!.document.uri)?.kernel).toBe('matmul');
  });

  it('opens CUDA beside the source and highlights the lines of the statement under the cursor', async () => {
    const { link } = server();
    const source = await vscode.window.showTextDocument(vscode.Uri.parse(file));
    const editor = (await showCuda(context(link), file, 'matmul')) as unknown as stub.TextEditor;
    expect(decodeIrUri(editor.document.uri as any)?.stage).toBe('cuda');
    expect(editor.document.languageId).toBe('cuda-cpp');
    (source as unknown as stub.TextEditor).selection = new stub.Selection(7, 0, 7, 3);
    stub.__test.fireSelection(source as unknown as stub.TextEditor);
    const ranges = [...editor.decorations.values()].flat();
    expect(ranges.map((r) => [r.start.line, r.end.line])).toEqual([[1, 2]]);
    (source as unknown as stub.TextEditor).selection = new stub.Selection(35, 0, 35, 0);
    stub.__test.fireSelection(source as unknown as stub.TextEditor);
    expect([...editor.decorations.values()].flat()).toEqual([]);
  });

  it('moves the cursor to the line a hover link names, highlighting that statement\'s CUDA lines', async () => {
    const { link } = server();
    const source = (await vscode.window.showTextDocument(vscode.Uri.parse(file))) as unknown as stub.TextEditor;
    const view = (await showCuda(context(link), file, 'matmul', 7)) as unknown as stub.TextEditor;
    expect([source.selection.start.line, source.selection.end.line]).toEqual([7, 7]);
    expect([...view.decorations.values()].flat().map((r) => [r.start.line, r.end.line])).toEqual([[1, 2]]);
    expect(view.revealed.map((r) => r.start.line)).toContain(1);
  });

  it('re-applies the highlight from the new line map when the view is refreshed after a save', async () => {
    const { link } = server();
    const ctx = context(link);
    const source = (await vscode.window.showTextDocument(vscode.Uri.parse(file))) as unknown as stub.TextEditor;
    const view = (await showCuda(ctx, file, 'matmul')) as unknown as stub.TextEditor;
    source.selection = new stub.Selection(9, 0, 9, 0);
    stub.__test.fireSelection(source);
    expect([...view.decorations.values()].flat().map((r) => r.start.line)).toEqual([3]);
    link.request = async <R>() => ({ text: 'a\nb\nc\nd\ne', languageId: 'cuda', stage: 'cuda', kernel: 'matmul', lineMap: [{ source: 9, lines: [4] }] }) as R;
    view.document.text = await ctx.provider.provideTextDocumentContent(view.document.uri as any, new vscode.CancellationTokenSource().token);
    stub.__test.fireChange(view.document);
    expect([...view.decorations.values()].flat().map((r) => r.start.line)).toEqual([4]);
  });

  it('highlights source lines from the CUDA view', async () => {
    const { link } = server();
    const source = (await vscode.window.showTextDocument(vscode.Uri.parse(file))) as unknown as stub.TextEditor;
    const view = (await showCuda(context(link), file, 'matmul')) as unknown as stub.TextEditor;
    view.selection = new stub.Selection(3, 0, 3, 0);
    stub.__test.fireSelection(view);
    expect([...source.decorations.values()].flat().map((r) => r.start.line)).toEqual([9]);
  });

  it('warns instead of failing when the server is not running', async () => {
    const warn = vi.spyOn(vscode.window, 'showWarningMessage');
    expect(await showIR(context(undefined), file, 'matmul')).toBeUndefined();
    expect(String(warn.mock.calls[0][0])).toContain('not running');
  });
});

describe('verify trust', () => {
  it('does not run user code when the user declines', async () => {
    const { link, calls } = server();
    expect(await ensureTrusted()).toBe(false);
    await runKernel(context(link), 'verify', file, 'matmul');
    expect(calls.filter((c) => c.method === 'workspace/executeCommand')).toEqual([]);
  });

  it('refuses in Restricted Mode without asking to allow', async () => {
    stub.workspace.isTrusted = false;
    stub.settingsStore.set('tilelsp.trustWorkspace', true);
    expect(await ensureTrusted()).toBe(false);
  });

  it('records the permission and runs when the user allows', async () => {
    const { link, calls } = server();
    vi.spyOn(vscode.window, 'showWarningMessage').mockImplementation(async () => 'Allow and Run' as any);
    const ctx = context(link);
    ctx.syncSettings = async () => void calls.push({ method: 'sync', params: stub.settingsStore.get('tilelsp.trustWorkspace') });
    await runKernel(ctx, 'verify', file, 'matmul');
    expect(stub.settingsStore.get('tilelsp.trustWorkspace')).toBe(true);
    expect(calls.map((c) => c.method)).toEqual(['sync', 'workspace/executeCommand']);
    expect(calls[0].params).toBe(true);
    const run = calls.find((c) => c.method === 'workspace/executeCommand');
    expect(run?.params.command).toBe('tilelsp.server.verify');
    expect(run?.params.arguments).toEqual([file, 'matmul']);
  });
});
