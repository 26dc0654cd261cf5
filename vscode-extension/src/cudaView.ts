/** Show CUDA beside the source and keep the two linked: the cursor's statement highlights its generated lines, and back. */

import * as vscode from 'vscode';
import { IR_SCHEME } from './constants';
import type { IrDocumentProvider } from './irDocument';
import { clampMap, generatedLinesFor, kernelWindow, sourceLinesFor, toSpans, type LineSpan, type LineWindow } from './lineMap';

/** One linked pair: a source document and a generated-code view of one of its kernels. */
interface Link {
  source: string;
  view: string;
  window?: LineWindow;
}

/** Whole-line editor ranges for line spans. */
export function spanRanges(spans: readonly LineSpan[]): vscode.Range[] {
  return spans.map((s) => new vscode.Range(s.start, 0, s.end, Number.MAX_SAFE_INTEGER));
}

export class LineLinker implements vscode.Disposable {
  private readonly links = new Map<string, Link>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly generatedDeco = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.rangeHighlightForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  private readonly sourceDeco = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
  });

  constructor(private readonly provider: IrDocumentProvider) {
    this.subscriptions.push(
      vscode.window.onDidChangeTextEditorSelection((e) => this.onSelection(e.textEditor)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.refresh()),
      // A view's new text (after a save) arrives as a document change; its line map is already stored.
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === IR_SCHEME && this.links.has(e.document.uri.toString())) {
          this.refresh();
        }
      }),
    );
  }

  /** Link a source document with a view; `window` is the kernel's line range in the source (0-based). */
  link(source: vscode.Uri, view: vscode.Uri, window?: LineWindow): void {
    this.links.set(view.toString(), { source: source.toString(), view: view.toString(), window });
    this.refresh();
  }

  private visible(uri: string): vscode.TextEditor[] {
    return vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === uri);
  }

  private mapFor(view: vscode.TextEditor) {
    const result = this.provider.result(view.document.uri);
    return clampMap(result?.lineMap, view.document.lineCount);
  }

  /** Highlight the generated lines of the source line under the cursor. */
  private fromSource(link: Link, source: vscode.TextEditor): void {
    for (const view of this.visible(link.view)) {
      const map = this.mapFor(view);
      const lines = generatedLinesFor(map, source.selection.active.line, kernelWindow(map, link.window));
      const ranges = spanRanges(toSpans(lines));
      view.setDecorations(this.generatedDeco, ranges);
      if (ranges.length > 0) {
        view.revealRange(ranges[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      }
    }
  }

  /** Highlight the source lines that produced the generated line under the cursor. */
  private fromView(link: Link, view: vscode.TextEditor): void {
    const lines = sourceLinesFor(this.mapFor(view), view.selection.active.line);
    const ranges = spanRanges(toSpans(lines));
    for (const source of this.visible(link.source)) {
      source.setDecorations(this.sourceDeco, ranges);
      if (ranges.length > 0) {
        source.revealRange(ranges[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      }
    }
  }

  private onSelection(editor: vscode.TextEditor): void {
    const uri = editor.document.uri.toString();
    if (editor.document.uri.scheme === IR_SCHEME) {
      const link = this.links.get(uri);
      if (link) {
        this.fromView(link, editor);
      }
      return;
    }
    for (const link of this.links.values()) {
      if (link.source === uri) {
        this.fromSource(link, editor);
      }
    }
  }

  /** Re-apply highlights (after a view was re-read or editors moved); forget views that were closed. */
  refresh(): void {
    const open = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
    for (const [key, link] of this.links) {
      if (!open.has(link.view)) {
        this.links.delete(key);
        continue;
      }
      for (const source of this.visible(link.source)) {
        this.fromSource(link, source);
      }
    }
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.generatedDeco.dispose();
    this.sourceDeco.dispose();
  }
}
