/** Read-only IR views: a TextDocumentContentProvider for `tilelang-ir:` URIs, refreshed when the source is saved. */

import * as vscode from 'vscode';
import { IR_SCHEME, Requests } from './constants';
import { decodeIrUri, editorLanguage, encodeIrUri, type IrRequest } from './irUri';
import type { ServerLink, ShowIRParams, ShowIRResult } from './protocol';

/** Build the `vscode.Uri` of an IR view. */
export function irUri(req: IrRequest): vscode.Uri {
  return vscode.Uri.from(encodeIrUri(req));
}

/** The showIR request parameters for a view. */
export function showIRParams(req: IrRequest): ShowIRParams {
  const params: ShowIRParams = { uri: req.source, kernel: req.kernel, stage: req.stage };
  if (req.target) {
    params.target = req.target;
  }
  if (req.instance) {
    params.instance = req.instance;
  }
  return params;
}

/** Text shown in place of the IR when the server cannot produce it. */
export function failureText(req: IrRequest, message: string): string {
  const comment = req.stage === 'cuda' || req.stage === 'llvm' ? (req.stage === 'llvm' ? ';' : '//') : '#';
  const lines = [`Could not produce the ${req.stage} stage of kernel ${req.kernel}:`, ...message.split(/\r?\n/)];
  return lines.map((l) => `${comment} ${l}`.trimEnd()).join('\n') + '\n';
}

export class IrDocumentProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly results = new Map<string, ShowIRResult>();
  private readonly subscriptions: vscode.Disposable[] = [];
  readonly onDidChange = this.changed.event;

  constructor(private readonly link: () => ServerLink | undefined) {
    this.subscriptions.push(
      vscode.workspace.onDidSaveTextDocument((doc) => this.refreshSource(doc.uri.toString())),
      vscode.workspace.onDidCloseTextDocument((doc) => this.results.delete(doc.uri.toString())),
    );
  }

  /** The last answer for a view (its lineMap drives the CUDA highlighting). */
  result(uri: vscode.Uri): ShowIRResult | undefined {
    return this.results.get(uri.toString());
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const req = decodeIrUri(uri);
    if (!req) {
      return `# Not a TileLang IR view: ${uri.toString()}\n`;
    }
    const link = this.link();
    if (!link) {
      return failureText(req, 'the tilelsp server is not running (TileLang: Restart Language Server).');
    }
    try {
      const result = await link.request<ShowIRResult>(Requests.showIR, showIRParams(req), token);
      this.results.set(uri.toString(), result);
      return result.text.endsWith('\n') ? result.text : `${result.text}\n`;
    } catch (err) {
      this.results.delete(uri.toString());
      return failureText(req, err instanceof Error ? err.message : String(err));
    }
  }

  /** Ask VS Code to re-read every open view of `source`. */
  refreshSource(source: string): number {
    let count = 0;
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === IR_SCHEME && decodeIrUri(doc.uri)?.source === source) {
        this.changed.fire(doc.uri);
        count += 1;
      }
    }
    return count;
  }

  /** Ask VS Code to re-read one view. */
  refreshUri(uri: vscode.Uri): void {
    this.changed.fire(uri);
  }

  /** Re-read every open view (after a server restart). */
  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === IR_SCHEME) {
        this.changed.fire(doc.uri);
      }
    }
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.changed.dispose();
  }
}

/** Open an IR view and give it the language the server reported. */
export async function openIrView(
  provider: IrDocumentProvider,
  req: IrRequest,
  column: vscode.ViewColumn,
  preserveFocus: boolean,
): Promise<vscode.TextEditor> {
  const uri = irUri(req);
  if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) {
    provider.refreshUri(uri);
  }
  let doc = await vscode.workspace.openTextDocument(uri);
  const language = editorLanguage(provider.result(uri)?.languageId, req.stage);
  if (doc.languageId !== language) {
    try {
      doc = await vscode.languages.setTextDocumentLanguage(doc, language);
    } catch {
      // The language is not installed (e.g. no LLVM grammar): keep plain text.
    }
  }
  return vscode.window.showTextDocument(doc, { viewColumn: column, preserveFocus, preview: false });
}
