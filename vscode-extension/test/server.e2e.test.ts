/**
 * Drives the real `python -m tilelsp serve` over stdio with the requests the extension sends, checking that the
 * server's answers fit the client's logic. Skipped when no Python with the tilelsp sources is found; the slow
 * lowering check runs only with TILELSP_E2E_LOWER=1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as rpc from 'vscode-jsonrpc/node';
import { codeStage, stagesFor } from '../src/commands';
import { failureText, showIRParams } from '../src/irDocument';
import { clampMap, generatedLinesFor, kernelWindow } from '../src/lineMap';
import type { KernelsResult, ShowIRResult, VerifyResult } from '../src/protocol';
import { serverArgv } from '../src/python';
import { answerConfiguration } from '../src/serverConfig';
import { DEFAULTS, readSettings, serverConfig } from '../src/settings';
import { formatResult } from '../src/verify';

const ROOT = process.env.TILELSP_ROOT ?? path.resolve(__dirname, '..', '..');
const PYTHON = process.env.TILELSP_PYTHON ?? path.join(ROOT, '.venv', 'bin', 'python');
const GEMM = path.join(ROOT, 'examples', 'gemm.py');
const available = existsSync(PYTHON) && existsSync(path.join(ROOT, 'tilelsp', 'server', 'app.py')) && existsSync(GEMM);
const uri = pathToFileURL(GEMM).toString();

let proc: ChildProcess;
let conn: rpc.MessageConnection;
// lowerOnSave off: the worker does not import tvm up front, so the quick cases stay quick.
const settings: Record<string, unknown> = { targets: ['sm_90a'], trustWorkspace: false, lowerOnSave: false };

describe.skipIf(!available)('against the real tilelsp server', () => {
  beforeAll(async () => {
    const argv = serverArgv({ command: PYTHON, args: [], source: 'setting' });
    proc = spawn(argv.command, argv.args, { cwd: ROOT, env: { ...process.env, PYTHONPATH: ROOT } });
    conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout!), new rpc.StreamMessageWriter(proc.stdin!));
    conn.onRequest('workspace/configuration', (p: { items: { section?: string }[] }) =>
      answerConfiguration(p.items, [], () => ({ get: <T>(k: string) => settings[k] as T }), true),
    );
    conn.onRequest(() => null);
    conn.onNotification(() => undefined);
    conn.listen();
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(ROOT).toString(),
      capabilities: { workspace: { configuration: true }, window: { workDoneProgress: false } },
      initializationOptions: serverConfig(readSettings({ get: <T>(k: string) => settings[k] as T })),
    });
    await conn.sendNotification('initialized', {});
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: readFileSync(GEMM, 'utf8') } });
  }, 60_000);

  afterAll(async () => {
    if (conn) {
      await conn.sendRequest('shutdown').catch(() => undefined);
      await conn.sendNotification('exit').catch(() => undefined);
      conn.dispose();
    }
    proc?.kill();
  });

  it('lists kernels in the shape the commands use', async () => {
    const result = await conn.sendRequest<KernelsResult>('tilelsp/kernels', { textDocument: { uri } });
    expect(result.kernels.map((k) => k.name)).toContain('gemm');
    const gemm = result.kernels.find((k) => k.name === 'gemm')!;
    expect(gemm.range.start.line).toBeGreaterThan(0);
    expect(codeStage(stagesFor(gemm, 'sm_90a'))).toBe('cuda');
    expect(gemm.instances?.length).toBeGreaterThan(0);
  }, 30_000);

  it('takes pushed settings in order, before the next request', async () => {
    const pushed = serverConfig({ ...DEFAULTS, targets: ['sm_80', 'sm_90a'] });
    await conn.sendNotification('workspace/didChangeConfiguration', { settings: { tilelsp: pushed } });
    const status = await conn.sendRequest<{ targets: string[]; trustWorkspace: boolean }>('tilelsp/status', {});
    expect(status.targets).toEqual(['sm_80', 'sm_90a']);
    expect(status.trustWorkspace).toBe(false);
  }, 30_000);

  it('refuses to verify until the workspace is trusted, with a result the output channel can show', async () => {
    const result = await conn.sendRequest<VerifyResult>('workspace/executeCommand', { command: 'tilelsp.server.verify', arguments: [uri, 'gemm'] });
    expect(result.passed).toBe(false);
    expect(result.message).toContain('trustWorkspace');
    const lines = formatResult('verify', 'gemm', 'gemm.py', { status: 'done', result });
    expect(lines[0]).toContain('FAILED');
  }, 30_000);

  it('answers a showIR for an unknown kernel with an error the view can show', async () => {
    const req = { source: uri, kernel: 'no_such_kernel', stage: 'parsed', target: 'sm_90a' };
    const err = await conn.sendRequest('tilelsp/showIR', showIRParams(req)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/no_such_kernel/);
    expect(failureText(req, err!.message)).toMatch(/^# Could not produce the parsed stage/);
  }, 60_000);

  it.skipIf(!process.env.TILELSP_E2E_LOWER)('maps the T.gemm line to CUDA lines', async () => {
    const kernels = await conn.sendRequest<KernelsResult>('tilelsp/kernels', { textDocument: { uri } });
    const gemm = kernels.kernels.find((k) => k.name === 'gemm')!;
    const ir = await conn.sendRequest<ShowIRResult>('tilelsp/showIR', showIRParams({ source: uri, kernel: 'gemm', stage: 'cuda', target: 'sm_90a' }));
    expect(ir.languageId).toBe('cuda');
    const map = clampMap(ir.lineMap, ir.text.split('\n').length);
    const gemmLine = readFileSync(GEMM, 'utf8').split('\n').findIndex((l) => l.includes('T.gemm('));
    const window = kernelWindow(map, { start: gemm.range.start.line, end: gemm.range.end.line });
    expect(generatedLinesFor(map, gemmLine, window).length).toBeGreaterThan(0);
  }, 300_000);
});
