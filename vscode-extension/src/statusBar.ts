/** The status bar item: server state and the active target arch(s); a click opens a small menu. */

import * as vscode from 'vscode';
import { Commands } from './constants';
import { describeInterpreter } from './python';
import type { ServerStatus } from './server';

const ICONS: Record<ServerStatus['state'], string> = {
  starting: '$(loading~spin)',
  running: '$(check)',
  stopped: '$(circle-slash)',
  failed: '$(error)',
};

/** The item's text: an icon for the state, then the targets (`sm_90a+sm_80`). */
export function statusText(status: ServerStatus, targets: readonly string[]): string {
  const arch = targets.length > 0 ? targets.join('+') : 'no target';
  return `${ICONS[status.state]} TileLang ${arch}`;
}

/** The item's tooltip (plain text lines). */
export function statusTooltip(status: ServerStatus, targets: readonly string[]): string {
  const lines = [`tilelsp server: ${status.state}`, `Targets: ${targets.join(', ') || 'none'}`];
  if (status.interpreter) {
    lines.push(`Python: ${describeInterpreter(status.interpreter)}`);
  }
  if (status.message) {
    lines.push(status.message);
  }
  lines.push('Click for TileLang actions');
  return lines.join('\n');
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('tilelsp.status', vscode.StatusBarAlignment.Left, 10);

  constructor() {
    this.item.name = 'TileLang';
    this.item.command = Commands.statusMenu;
    this.item.show();
  }

  update(status: ServerStatus, targets: readonly string[]): void {
    this.item.text = statusText(status, targets);
    this.item.tooltip = statusTooltip(status, targets);
    this.item.backgroundColor = status.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** The menu behind the status bar item. */
export async function showStatusMenu(): Promise<void> {
  const items: (vscode.QuickPickItem & { run: () => Thenable<unknown> })[] = [
    { label: '$(debug-restart) Restart Language Server', run: () => vscode.commands.executeCommand(Commands.restartServer) },
    { label: '$(output) Show Server Output', run: () => vscode.commands.executeCommand(Commands.showOutput) },
    { label: '$(list-tree) Show IR…', run: () => vscode.commands.executeCommand(Commands.showIR) },
    { label: '$(split-horizontal) Show CUDA Beside Source…', run: () => vscode.commands.executeCommand(Commands.showCuda) },
    { label: '$(settings-gear) Targets and Settings', run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'tilelsp.') },
  ];
  const choice = await vscode.window.showQuickPick(items, { placeHolder: 'TileLang' });
  await choice?.run();
}
