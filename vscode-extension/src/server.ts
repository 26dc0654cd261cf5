/** The language client's lifecycle: pick the interpreter, probe for tilelsp, start/stop/restart `python -m tilelsp serve`. */

import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { LanguageClient, State, TransportKind, WorkDoneProgress, WorkDoneProgressCreateRequest, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { CLIENT_ID, CLIENT_NAME, SECTION } from './constants';
import { probeFailureMessage, resolveInterpreter, serverArgv, type Interpreter, type PythonExtensionApi } from './python';
import type { ServerLink } from './protocol';
import { ProgressRouter, showServerProgress } from './progress';
import { answerConfiguration } from './serverConfig';
import { readSettings, serverConfig } from './settings';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export interface ServerStatus {
  state: ServerState;
  interpreter?: Interpreter;
  message?: string;
}

async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Run `python -c "import tilelsp"`; resolves to an error message, or undefined when the import works. */
function probe(interp: Interpreter): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(interp.command, [...interp.args, '-c', 'import tilelsp'], { timeout: 30_000, cwd: workspaceFolder() }, (err, _out, stderr) => {
      resolve(err ? probeFailureMessage(interp, err as { code?: unknown; message?: string }, String(stderr)) : undefined);
    });
  });
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<void> = Promise.resolve();
  private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
  private current: ServerStatus = { state: 'stopped' };
  private readonly progress = new ProgressRouter();
  readonly onDidChangeStatus = this.statusEmitter.event;

  constructor(private readonly output: vscode.LogOutputChannel) {}

  get status(): ServerStatus {
    return this.current;
  }

  /** The running client as a ServerLink, or undefined. */
  link(): ServerLink | undefined {
    const client = this.client;
    if (!client || !client.isRunning()) {
      return undefined;
    }
    return {
      // An explicit `undefined` token would be sent as a second positional parameter.
      request: <R>(method: string, params: unknown, token?: vscode.CancellationToken) =>
        token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params),
      notify: (method: string, params: unknown) => client.sendNotification(method, params),
      onProgress: (token, handler) => client.onProgress(WorkDoneProgress.type, token, handler),
      claimProgress: (sink) => this.progress.claim(sink),
    };
  }

  /**
   * Push the validated settings to the running server (workspace/didChangeConfiguration with
   * `{tilelsp: {...}}`); messages are ordered, so a request sent afterwards sees them.
   */
  async sendConfiguration(): Promise<void> {
    const client = this.client;
    if (client?.isRunning()) {
      const settings = readSettings(vscode.workspace.getConfiguration(SECTION));
      await client.sendNotification('workspace/didChangeConfiguration', { settings: { [SECTION]: serverConfig(settings, vscode.workspace.isTrusted) } });
    }
  }

  /** Start (or restart) the server; calls are serialized. */
  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopClient();
      await this.startClient();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopClient());
  }

  /** Run lifecycle steps one after another; a failure is reported and does not block later steps. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step).catch((err) => {
      const message = `TileLang: ${err instanceof Error ? err.message : String(err)}`;
      this.output.error(message);
      this.setStatus({ state: 'failed', message });
    });
    return this.queue;
  }

  private setStatus(status: ServerStatus): void {
    this.current = status;
    this.statusEmitter.fire(status);
  }

  private async startClient(): Promise<void> {
    const settings = readSettings(vscode.workspace.getConfiguration(SECTION));
    const api = settings.interpreter ? undefined : await pythonExtensionApi();
    // A workspace's own .venv is only run once the workspace is trusted (it could be anything).
    const venvCheck = vscode.workspace.isTrusted ? undefined : () => false;
    const interp = await resolveInterpreter(settings.interpreter, api, workspaceFolder(), vscode.window.activeTextEditor?.document.uri, venvCheck);
    this.setStatus({ state: 'starting', interpreter: interp });
    this.output.info(`Starting ${[interp.command, ...interp.args].join(' ')} -m tilelsp serve (interpreter from ${interp.source})`);
    const problem = await probe(interp);
    if (problem) {
      this.output.error(problem);
      this.setStatus({ state: 'failed', interpreter: interp, message: problem });
      void this.offerFix(problem);
      return;
    }
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, this.serverOptions(interp), this.clientOptions(settings));
    client.onDidChangeState((e) => {
      if (this.client === client) {
        this.setStatus({ state: e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped', interpreter: interp });
      }
    });
    this.client = client;
    try {
      await client.start();
      this.routeServerProgress(client);
      this.setStatus({ state: 'running', interpreter: interp });
    } catch (err) {
      const message = `TileLang: the server failed to start: ${err instanceof Error ? err.message : String(err)}`;
      this.output.error(message);
      this.setStatus({ state: 'failed', interpreter: interp, message });
    }
  }

  /**
   * Replace the client's default handling of server-created progress: a Verify/Benchmark run that is waiting
   * takes it into its own notification (one notification, not two); anything else is shown on its own.
   */
  private routeServerProgress(client: LanguageClient): void {
    client.onRequest(WorkDoneProgressCreateRequest.type, (params) => {
      const link = this.link();
      if (link && !this.progress.created(params.token, link)) {
        showServerProgress(link, params.token);
      }
    });
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.dispose(5_000);
      } catch (err) {
        this.output.warn(`Stopping the server: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.setStatus({ state: 'stopped' });
  }

  private serverOptions(interp: Interpreter): ServerOptions {
    const argv = serverArgv(interp);
    return {
      command: argv.command,
      args: argv.args,
      transport: TransportKind.stdio,
      options: { cwd: workspaceFolder(), env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
  }

  private clientOptions(settings: ReturnType<typeof readSettings>): LanguageClientOptions {
    return {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.output,
      traceOutputChannel: this.output,
      initializationOptions: serverConfig(settings, vscode.workspace.isTrusted),
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const raw = await next(params, token);
            const values = Array.isArray(raw) ? raw : [];
            return answerConfiguration(params.items, values, (scope) => vscode.workspace.getConfiguration(SECTION, scope ? vscode.Uri.parse(scope) : undefined), vscode.workspace.isTrusted);
          },
        },
      },
    };
  }

  private async offerFix(problem: string): Promise<void> {
    const actions = ['Open Settings', 'Show Output'];
    if (vscode.extensions.getExtension('ms-python.python')) {
      actions.unshift('Select Interpreter');
    }
    const choice = await vscode.window.showErrorMessage(problem, ...actions);
    if (choice === 'Select Interpreter') {
      await vscode.commands.executeCommand('python.setInterpreter');
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'tilelsp.interpreter');
    } else if (choice === 'Show Output') {
      this.output.show(true);
    }
  }

  dispose(): void {
    void this.stop();
    this.statusEmitter.dispose();
  }
}

/** Subscribe to the Python extension's interpreter changes (when it is installed). */
export async function onPythonInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await pythonExtensionApi();
  return api?.environments?.onDidChangeActiveEnvironmentPath?.(listener) ?? api?.settings?.onDidChangeExecutionDetails?.(listener);
}
