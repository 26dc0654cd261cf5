/** The status bar item: server state and the active target arch(s); a click opens a small menu. */

import * as vscode from 'vscode';
import { Commands, KNOWN_TARGETS, SECTION } from './constants';
import { readSettings } from './settings';
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
    { label: '$(chip) Select Targets…', run: () => vscode.commands.executeCommand(Commands.selectTargets) },
    { label: '$(settings-gear) Settings', run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'tilelsp.') },
  ];
  const choice = await vscode.window.showQuickPick(items, { placeHolder: 'TileLang' });
  await choice?.run();
}

/** Targets for the picker: the known ones, then any other configured ones; the configured ones are picked. */
export function targetItems(current: readonly string[]): { label: string; picked: boolean }[] {
  const all = [...KNOWN_TARGETS, ...current.filter((t) => !KNOWN_TARGETS.includes(t))];
  return all.map((label) => ({ label, picked: current.includes(label) }));
}

/** `tilelsp.selectTargets`: choose the archs to check (the first picked is used by Show IR / Show CUDA). */
export async function selectTargets(): Promise<string[] | undefined> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const current = readSettings(config).targets;
  const picked = await vscode.window.showQuickPick(targetItems(current), { canPickMany: true, placeHolder: 'Targets to check against' });
  if (!picked || picked.length === 0) {
    return undefined;
  }
  const order = [...current, ...KNOWN_TARGETS];
  const targets = picked.map((p) => p.label).sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const scope = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update('targets', targets, scope);
  return targets;
}
