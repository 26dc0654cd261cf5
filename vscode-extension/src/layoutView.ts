/** Show Layout: the server's `tilelsp/layout` page (inline SVG pictures, no scripts) in a webview panel per kernel. */

import * as vscode from 'vscode';
import { Requests, SECTION } from './constants';
import type { ServerLink } from './protocol';
import { primaryTarget, readSettings } from './settings';

export interface LayoutBuffer {
  name: string;
  scope: string;
  description: string;
  svg: string;
  text: string;
}

export interface LayoutResult {
  kernel: string;
  instance?: string | null;
  target: string;
  title: string;
  buffers: LayoutBuffer[];
  html: string;
}

/** The webview panels, one per (document, kernel, buffer): a second Show Layout reveals and refreshes it. */
export class LayoutPanels implements vscode.Disposable {
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  show(key: string, result: LayoutResult): vscode.WebviewPanel {
    let panel = this.panels.get(key);
    if (panel) {
      panel.reveal(vscode.ViewColumn.Beside, true);
    } else {
      panel = vscode.window.createWebviewPanel('tilelsp.layout', result.title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: false,
        localResourceRoots: [],
      });
      this.panels.set(key, panel);
      panel.onDidDispose(() => this.panels.delete(key));
    }
    panel.title = result.buffers.length === 1 ? `Layout: ${result.buffers[0].name}` : `Layouts: ${result.kernel}`;
    panel.webview.html = result.html;
    return panel;
  }

  dispose(): void {
    for (const panel of [...this.panels.values()]) {
      panel.dispose();
    }
    this.panels.clear();
  }
}

/** Ask the server for the layout views of a kernel (one buffer when named). */
export async function fetchLayout(link: ServerLink, uri: string, kernel: string, buffer?: string): Promise<LayoutResult> {
  const target = primaryTarget(readSettings(vscode.workspace.getConfiguration(SECTION)));
  const params: Record<string, unknown> = { textDocument: { uri }, kernel, target };
  if (buffer) {
    params.buffer = buffer;
  }
  return link.request<LayoutResult>(Requests.layout, params);
}

/** `tilelsp.showLayout [uri, kernel, buffer?]`: the kernel's (or one buffer's) layout pictures beside the source. */
export async function showLayout(panels: LayoutPanels, chosen: { link: ServerLink; uri: string; kernel: string } | undefined, buffer?: string): Promise<vscode.WebviewPanel | undefined> {
  if (!chosen) {
    return undefined;
  }
  try {
    const result = await fetchLayout(chosen.link, chosen.uri, chosen.kernel, buffer);
    return panels.show(`${chosen.uri}#${chosen.kernel}#${buffer ?? ''}`, result);
  } catch (err) {
    void vscode.window.showErrorMessage(`TileLang: Show Layout failed: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}
