import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { showLayoutCommand, type CommandContext } from '../src/commands';
import { LineLinker } from '../src/cudaView';
import { IrDocumentProvider } from '../src/irDocument';
import { LayoutPanels, type LayoutResult } from '../src/layoutView';
import type { ServerLink } from '../src/protocol';
import * as stub from './stub/vscode';

const file = 'file:///w/gemm.py';

function server(fail = false) {
  const calls: { method: string; params: any }[] = [];
  const link: ServerLink = {
    request: async <R>(method: string, params: any) => {
      calls.push({ method, params });
      if (method === 'tilelsp/kernels') {
        return { kernels: [{ name: 'gemm', range: { start: { line: 8, character: 0 }, end: { line: 30, character: 0 } } }] } as R;
      }
      if (method === 'tilelsp/layout') {
        if (fail) {
          throw new Error('no fragment or shared buffer named X');
        }
        const names = params.buffer ? [params.buffer] : ['A_shared', 'C_local'];
        const result: LayoutResult = {
          kernel: params.kernel, target: params.target, title: `layouts of kernel ${params.kernel}`,
          buffers: names.map((name: string) => ({ name, scope: 'shared', description: '', svg: '<svg/>', text: name })),
          html: `<!DOCTYPE html><html><body>${names.join(',')}</body></html>`,
        };
        return result as R;
      }
      throw new Error(`unexpected ${method}`);
    },
    notify: async () => undefined,
    onProgress: () => ({ dispose: () => undefined }),
  };
  return { link, calls };
}

const live: { dispose(): void }[] = [];

function context(link: ServerLink): CommandContext {
  const provider = new IrDocumentProvider(() => link);
  const linker = new LineLinker(provider);
  live.push(linker, provider);
  return { link: () => link, provider, linker, results: vscode.window.createOutputChannel('r') };
}

beforeEach(() => stub.__test.reset());
afterEach(() => live.splice(0).forEach((d) => d.dispose()));

describe('Show Layout', () => {
  it('shows the server page for a code-lens kernel in a script-less webview, with the first target', async () => {
    stub.settingsStore.set('tilelsp.targets', ['sm_80', 'sm_90a']);
    const { link, calls } = server();
    const panels = new LayoutPanels();
    live.push(panels);
    const panel = await showLayoutCommand(context(link), panels, file, 'gemm');
    expect(calls.find((c) => c.method === 'tilelsp/layout')?.params).toEqual({ textDocument: { uri: file }, kernel: 'gemm', target: 'sm_80' });
    expect(panel?.webview.html).toContain('A_shared,C_local');
    expect(stub.webviewPanels).toHaveLength(1);
    expect((stub.webviewPanels[0].options as { enableScripts: boolean }).enableScripts).toBe(false);
    expect(panel?.title).toBe('Layouts: gemm');
  });

  it('reuses the panel of the same buffer and opens one per buffer (the hover link names one)', async () => {
    const { link } = server();
    const panels = new LayoutPanels();
    live.push(panels);
    const first = await showLayoutCommand(context(link), panels, file, 'gemm', 'C_local');
    const again = await showLayoutCommand(context(link), panels, file, 'gemm', 'C_local');
    expect(again).toBe(first);
    expect(stub.webviewPanels[0].revealed).toBe(1);
    expect(first?.title).toBe('Layout: C_local');
    await showLayoutCommand(context(link), panels, file, 'gemm', 'A_shared');
    expect(stub.webviewPanels).toHaveLength(2);
    first?.dispose();
    await showLayoutCommand(context(link), panels, file, 'gemm', 'C_local');
    expect(stub.webviewPanels).toHaveLength(3);
  });

  it('reports a server error instead of opening a panel', async () => {
    const { link } = server(true);
    const error = vi.spyOn(vscode.window, 'showErrorMessage');
    const panels = new LayoutPanels();
    live.push(panels);
    expect(await showLayoutCommand(context(link), panels, file, 'gemm', 'X')).toBeUndefined();
    expect(String(error.mock.calls[0][0])).toContain('Show Layout failed: no fragment or shared buffer named X');
    expect(stub.webviewPanels).toHaveLength(0);
  });
});
