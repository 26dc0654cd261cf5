/** From generated code back to the kernel: hover shows the source line a CUDA line came from; Go to Definition jumps there. */

import * as vscode from 'vscode';
import type { IrDocumentProvider } from './irDocument';
import { decodeIrUri } from './irUri';
import { clampMap, sourceLinesFor } from './lineMap';

/** The source lines (0-based) behind a line of an IR view, and the source URI. */
export function sourceOf(provider: IrDocumentProvider, doc: vscode.TextDocument, line: number): { source: vscode.Uri; lines: number[] } | undefined {
  const req = decodeIrUri(doc.uri);
  const result = provider.result(doc.uri);
  if (!req || !result) {
    return undefined;
  }
  const lines = sourceLinesFor(clampMap(result.lineMap, doc.lineCount), line);
  return lines.length > 0 ? { source: vscode.Uri.parse(req.source), lines } : undefined;
}

/** Markdown for a hover: the file name, line numbers and the lines themselves. */
export function hoverMarkdown(fileName: string, lines: readonly number[], text: (line: number) => string | undefined): string {
  const numbers = lines.map((l) => l + 1).join(', ');
  const code = lines.map((l) => (text(l) ?? '').trim()).filter(Boolean);
  const header = `From \`${fileName}\` line${lines.length > 1 ? 's' : ''} ${numbers}`;
  return code.length > 0 ? `${header}\n\n\`\`\`python\n${code.join('\n')}\n\`\`\`` : header;
}

export class IrNavigation implements vscode.HoverProvider, vscode.DefinitionProvider {
  constructor(private readonly provider: IrDocumentProvider) {}

  provideHover(doc: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const found = sourceOf(this.provider, doc, position.line);
    if (!found) {
      return undefined;
    }
    const sourceDoc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === found.source.toString());
    const lineText = (l: number) => (sourceDoc && l < sourceDoc.lineCount ? sourceDoc.lineAt(l).text : undefined);
    const fileName = found.source.path.split('/').pop() ?? found.source.toString();
    return new vscode.Hover(new vscode.MarkdownString(hoverMarkdown(fileName, found.lines, lineText)));
  }

  provideDefinition(doc: vscode.TextDocument, position: vscode.Position): vscode.Location[] | undefined {
    const found = sourceOf(this.provider, doc, position.line);
    return found?.lines.map((l) => new vscode.Location(found.source, new vscode.Position(l, 0)));
  }
}
