import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import * as os from 'node:os';
import { ServerManager } from '../src/server';
import * as stub from './stub/vscode';

/** A stand-in for vscode-languageclient's LanguageClient that records what the manager does with it. */
const { FakeClient, clients, flags } = vi.hoisted(() => {
  const clients: any[] = [];
  const flags = { failNextStart: false };
  class FakeClient {
    running = false;
    requests: unknown[][] = [];
    notifications: unknown[][] = [];
    handlers = new Map<string, (p: unknown) => unknown>();
    constructor(
      readonly id: string,
      readonly name: string,
      readonly serverOptions: { command: string; args: string[]; options: { cwd?: string } },
      readonly clientOptions: { initializationOptions: Record<string, unknown>; middleware: any; documentSelector: unknown[] },
    ) {
      clients.push(this);
    }
    onDidChangeState() {
      return { dispose: () => undefined };
    }
    async start() {
      if (flags.failNextStart) {
        flags.failNextStart = false;
        throw new Error('Server initialization failed.');
      }
      this.running = true;
    }
    isRunning() {
      return this.running;
    }
    async dispose() {
      this.running = false;
    }
    async sendRequest(...args: unknown[]) {
      this.requests.push(args);
      return { kernels: [] };
    }
    async sendNotification(...args: unknown[]) {
      this.notifications.push(args);
    }
    onRequest(type: { method: string }, handler: (p: unknown) => unknown) {
      this.handlers.set(type.method, handler);
      return { dispose: () => undefined };
    }
    onProgress() {
      return { dispose: () => undefined };
    }
  }
  return { FakeClient, clients, flags };
});

vi.mock('vscode-languageclient/node', () => ({
  LanguageClient: FakeClient,
  State: { Stopped: 1, Running: 2, Starting: 3 },
  TransportKind: { stdio: 0 },
  WorkDoneProgress: { type: {} },
  WorkDoneProgressCreateRequest: { type: { method: 'window/workDoneProgress/create' } },
}));


function manager() {
  return new ServerManager(vscode.window.createOutputChannel('s', { log: true }));
}

beforeEach(() => {
  stub.__test.reset();
  clients.length = 0;
  flags.failNextStart = false;
});

describe('server manager', () => {
  it('starts `<interpreter> -m tilelsp serve` in the workspace folder with validated settings', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/bin/true');
    stub.settingsStore.set('tilelsp.targets', ['sm_80', 'nonsense']);
    stub.workspace.workspaceFolders = [{ uri: vscode.Uri.file(os.tmpdir()) as unknown as stub.Uri }];
    const m = manager();
    await m.restart();
    expect(m.status.state).toBe('running');
    const c = clients[0];
    expect(c.serverOptions.command).toBe('/bin/true');
    expect(c.serverOptions.args).toEqual(['-m', 'tilelsp', 'serve']);
    expect(c.serverOptions.options.cwd).toBe(os.tmpdir());
    expect(c.clientOptions.initializationOptions.targets).toEqual(['sm_80']);
    expect(c.clientOptions.documentSelector).toEqual([{ scheme: 'file', language: 'python' }, { scheme: 'untitled', language: 'python' }]);
    expect(c.handlers.has('window/workDoneProgress/create')).toBe(true);
  });

  it('reports a missing interpreter without starting a client', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/nonexistent/python3');
    const err = vi.spyOn(vscode.window, 'showErrorMessage');
    const m = manager();
    await m.restart();
    expect(m.status.state).toBe('failed');
    expect(m.status.message).toContain('"/nonexistent/python3" was not found');
    expect(clients).toHaveLength(0);
    expect(err).toHaveBeenCalled();
  });

  it('recovers from a failed start on the next restart', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/bin/true');
    const m = manager();
    flags.failNextStart = true;
    await m.restart();
    expect(m.status.state).toBe('failed');
    await m.restart();
    expect(m.status.state).toBe('running');
    expect(clients).toHaveLength(2);
  });

  it('sends requests without a token as one parameter object', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/bin/true');
    const m = manager();
    await m.restart();
    await m.link()!.request('tilelsp/kernels', { textDocument: { uri: 'file:///a.py' } });
    expect(clients[0].requests[0]).toEqual(['tilelsp/kernels', { textDocument: { uri: 'file:///a.py' } }]);
  });

  it('pushes settings to the server, withholding trust in Restricted Mode', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/bin/true');
    stub.settingsStore.set('tilelsp.trustWorkspace', true);
    const m = manager();
    await m.restart();
    await m.sendConfiguration();
    stub.workspace.isTrusted = false;
    await m.sendConfiguration();
    const sent = clients[0].notifications.map((n: unknown[]) => (n[1] as { settings: { tilelsp: { trustWorkspace: boolean } } }).settings.tilelsp.trustWorkspace);
    expect(clients[0].notifications[0][0]).toBe('workspace/didChangeConfiguration');
    expect(sent).toEqual([true, false]);
  });

  it('answers workspace/configuration through its middleware', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/bin/true');
    stub.settingsStore.set('tilelsp.debounceMs', 50);
    const m = manager();
    await m.restart();
    const answer = await clients[0].clientOptions.middleware.workspace.configuration({ items: [{ section: 'tilelsp' }, { section: 'other' }] }, undefined, async () => [{}, 7]);
    expect(answer[0]).toMatchObject({ debounceMs: 50, targets: ['sm_90a'] });
    expect(answer[1]).toBe(7);
  });

  it('stops the client', async () => {
    stub.settingsStore.set('tilelsp.interpreter', '/bin/true');
    const m = manager();
    await m.restart();
    await m.stop();
    expect(m.status.state).toBe('stopped');
    expect(clients[0].running).toBe(false);
    expect(m.link()).toBeUndefined();
  });
});

describe('workspace venv and trust', () => {
  it('runs the workspace .venv only in a trusted workspace', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tilelsp-ws-'));
    fs.mkdirSync(path.join(dir, '.venv', 'bin'), { recursive: true });
    fs.symlinkSync('/bin/true', path.join(dir, '.venv', 'bin', 'python'));
    stub.workspace.workspaceFolders = [{ uri: vscode.Uri.file(dir) as unknown as stub.Uri }];
    const m = manager();
    await m.restart();
    expect(m.status.interpreter?.source).toBe('workspace-venv');
    stub.workspace.isTrusted = false;
    await m.restart();
    expect(m.status.interpreter?.source).toBe('default');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
