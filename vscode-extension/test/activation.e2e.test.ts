/**
 * Activates the extension for real (src/extension.ts with the real vscode-languageclient) against the real
 * `python -m tilelsp serve`, on a stub VS Code. Skipped when no Python with the tilelsp sources is found.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { decodeIrUri } from '../src/irUri';
import { installVscodeModule } from './stub/host';
import * as stub from './stub/vscode';

const ROOT = process.env.TILELSP_ROOT ?? path.resolve(__dirname, '..', '..');
const PYTHON = process.env.TILELSP_PYTHON ?? path.join(ROOT, '.venv', 'bin', 'python');
const GEMM = path.join(ROOT, 'examples', 'gemm.py');
const available = existsSync(PYTHON) && existsSync(path.join(ROOT, 'tilelsp', 'server', 'app.py')) && existsSync(GEMM);

let ext: typeof import('../src/extension');
const context = { subscriptions: [] as { dispose(): unknown }[] };
const gemmUri = vscode.Uri.file(GEMM);

function irDocs(): stub.TextDocument[] {
  return stub.workspace.textDocuments.filter((d) => d.uri.scheme === 'tilelang-ir');
}

describe.skipIf(!available)('the activated extension', () => {
  beforeAll(async () => {
    stub.__test.reset();
    stub.settingsStore.set('tilelsp.interpreter', PYTHON);
    stub.settingsStore.set('tilelsp.lowerOnSave', false); // no tvm warm-up in the worker: keeps the session short
    stub.workspace.workspaceFolders = [{ uri: vscode.Uri.file(ROOT) as unknown as stub.Uri, name: 'main', index: 0 } as { uri: stub.Uri }];
    const doc = new stub.TextDocument(gemmUri as unknown as stub.Uri, readFileSync(GEMM, 'utf8'), 'python');
    stub.workspace.textDocuments.push(doc);
    stub.window.activeTextEditor = new stub.TextEditor(doc);
    stub.window.visibleTextEditors.push(stub.window.activeTextEditor);
    installVscodeModule();
    ext = await import('../src/extension.js');
    const t0 = performance.now();
    const api = ext.activate(context as unknown as vscode.ExtensionContext);
    expect(stub.statusItems[0]?.text).toMatch(/^\$\((loading~spin|circle-slash)\) TileLang sm_90a$/); // activation did not wait
    await api.ready;
    console.log(`activate() to a running server: ${(performance.now() - t0).toFixed(0)} ms`);
  }, 90_000);

  afterAll(async () => {
    await ext?.deactivate();
    context.subscriptions.forEach((s) => s.dispose());
  });

  it('starts the server and shows it running with the target in the status bar', () => {
    expect(stub.statusItems[0]?.text).toBe('$(check) TileLang sm_90a');
    expect(String(stub.statusItems[0]?.tooltip)).toContain(`Python: ${PYTHON} (tilelsp.interpreter)`);
    expect([...stub.registered.keys()]).toEqual(expect.arrayContaining(['tilelsp.showIR', 'tilelsp.showCuda', 'tilelsp.showLayout', 'tilelsp.verify', 'tilelsp.benchmark', 'tilelsp.restartServer']));
  });

  it('runs Show IR from code-lens arguments through the real client, showing a server error in the view', async () => {
    await stub.commands.executeCommand('tilelsp.showIR', gemmUri.toString(), 'no_such_kernel');
    const view = irDocs().find((d) => decodeIrUri(d.uri)?.kernel === 'no_such_kernel');
    expect(view?.getText()).toMatch(/^# Could not produce the parsed stage of kernel no_such_kernel:/);
    expect(view?.getText().split('\n')[1]).toContain('no_such_kernel'); // the server's own message
  }, 60_000);

  it('asks for the kernel from the palette using the server kernel list', async () => {
    const pick = vi.spyOn(stub.window, 'showQuickPick').mockImplementation(async () => undefined);
    const err = vi.spyOn(stub.window, 'showErrorMessage');
    await stub.commands.executeCommand('tilelsp.showIR');
    expect(err).not.toHaveBeenCalled();
    expect(pick).toHaveBeenCalledTimes(1);
    const stages = pick.mock.calls[0][0] as string[];
    expect(stages).toContain('cuda');
    pick.mockRestore();
  }, 60_000);

  it('restarts on demand', async () => {
    await stub.commands.executeCommand('tilelsp.restartServer');
    expect(stub.statusItems[0]?.text).toBe('$(check) TileLang sm_90a');
  }, 60_000);

  it.skipIf(!process.env.TILELSP_E2E_LOWER)('shows CUDA beside the source and highlights the T.gemm lines', async () => {
    const editor = (await stub.commands.executeCommand('tilelsp.showCuda', gemmUri.toString(), 'gemm')) as stub.TextEditor;
    expect(editor.document.getText()).toContain('__global__');
    const source = stub.window.visibleTextEditors.find((e) => e.document.uri.toString() === gemmUri.toString())!;
    const line = source.document.getText().split('\n').findIndex((l) => l.includes('T.gemm('));
    source.selection = new stub.Selection(line, 8, line, 8);
    stub.__test.fireSelection(source);
    expect([...editor.decorations.values()].flat().length).toBeGreaterThan(0);
  }, 300_000);

  it.skipIf(!process.env.TILELSP_E2E_LOWER)('verifies with one progress notification and logs the result', async () => {
    vi.spyOn(stub.window, 'showWarningMessage').mockImplementation(async () => 'Allow and Run' as never);
    const withProgress = vi.spyOn(stub.window, 'withProgress');
    stub.progressReports.length = 0;
    await stub.commands.executeCommand('tilelsp.verify', gemmUri.toString(), 'gemm');
    expect(stub.settingsStore.get('tilelsp.trustWorkspace')).toBe(true);
    expect(withProgress).toHaveBeenCalledTimes(1);
    expect(stub.progressReports.length).toBeGreaterThan(0);
    const results = stub.channels.find((c) => c.name === 'TileLang Verify')!;
    expect(results.lines.join('\n')).toMatch(/verify gemm \(gemm\.py\): Verify gemm: (passed|FAILED)/);
  }, 300_000);
});
