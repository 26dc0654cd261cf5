/** Entry point: wires the server manager, status bar, IR views, CUDA line linking, layout panels and the commands. */

import * as vscode from 'vscode';
import { Commands, IR_SCHEME, SECTION } from './constants';
import { runKernel, showCuda, showIR, showLayoutCommand, type CommandContext } from './commands';
import { LineLinker } from './cudaView';
import { IrDocumentProvider } from './irDocument';
import { IrNavigation } from './irNavigation';
import { LayoutPanels } from './layoutView';
import { needsRestart, readSettings } from './settings';
import { onPythonInterpreterChange, ServerManager } from './server';
import { selectTargets, showStatusMenu, StatusBar } from './statusBar';
import { debounce } from './util';

let manager: ServerManager | undefined;

/** What `activate` returns (the extension's exports): `ready` settles once the first server start is done. */
export interface TileLangApi {
  ready: Promise<void>;
}

export function activate(context: vscode.ExtensionContext): TileLangApi {
  const output = vscode.window.createOutputChannel('TileLang Language Server', { log: true });
  const results = vscode.window.createOutputChannel('TileLang Verify');
  manager = new ServerManager(output);
  const server = manager;
  const provider = new IrDocumentProvider(() => server.link());
  const linker = new LineLinker(provider);
  const navigation = new IrNavigation(provider);
  const status = new StatusBar();
  const panels = new LayoutPanels();
  const targets = () => readSettings(vscode.workspace.getConfiguration(SECTION)).targets;
  const ctx: CommandContext = { link: () => server.link(), provider, linker, results, syncSettings: () => server.sendConfiguration() };
  const restart = debounce(() => void server.restart(), 500);

  context.subscriptions.push(
    output, results, server, provider, linker, status, panels, { dispose: () => restart.cancel() },
    vscode.workspace.registerTextDocumentContentProvider(IR_SCHEME, provider),
    vscode.languages.registerHoverProvider({ scheme: IR_SCHEME }, navigation),
    vscode.languages.registerDefinitionProvider({ scheme: IR_SCHEME }, navigation),
    server.onDidChangeStatus((s) => {
      status.update(s, targets());
      if (s.state === 'running') {
        provider.refreshAll();
      }
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart((section) => e.affectsConfiguration(section))) {
        restart();
      } else if (e.affectsConfiguration(SECTION)) {
        void server.sendConfiguration();
      }
      if (e.affectsConfiguration(SECTION)) {
        status.update(server.status, targets());
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.sendConfiguration()),
    vscode.commands.registerCommand(Commands.showIR, (...args: unknown[]) => showIR(ctx, ...args)),
    vscode.commands.registerCommand(Commands.showCuda, (...args: unknown[]) => showCuda(ctx, ...args)),
    vscode.commands.registerCommand(Commands.showLayout, (...args: unknown[]) => showLayoutCommand(ctx, panels, ...args)),
    vscode.commands.registerCommand(Commands.verify, (...args: unknown[]) => runKernel(ctx, 'verify', ...args)),
    vscode.commands.registerCommand(Commands.benchmark, (...args: unknown[]) => runKernel(ctx, 'benchmark', ...args)),
    vscode.commands.registerCommand(Commands.restartServer, () => server.restart()),
    vscode.commands.registerCommand(Commands.showOutput, () => output.show(true)),
    vscode.commands.registerCommand(Commands.statusMenu, () => showStatusMenu()),
    vscode.commands.registerCommand(Commands.selectTargets, () => selectTargets()),
  );
  status.update(server.status, targets());
  // Activation does not wait for the server: a slow or stuck interpreter must not hold up VS Code.
  const ready = server.restart();
  void onPythonInterpreterChange(() => {
    if (!readSettings(vscode.workspace.getConfiguration(SECTION)).interpreter) {
      restart();
    }
  }).then((sub) => sub && context.subscriptions.push(sub));
  return { ready };
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
