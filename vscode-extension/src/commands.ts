/** The client commands: Show IR, Show CUDA, Show Layout, Verify, Benchmark. Each accepts `[uri, kernel]` or asks for what is missing. */

import * as vscode from 'vscode';
import { DEFAULT_CPU_STAGES, DEFAULT_CUDA_STAGES, Requests, SECTION } from './constants';
import { orderKernels, parseCommandTarget, type CommandTarget } from './commandArgs';
import type { LineLinker } from './cudaView';
import { openIrView, type IrDocumentProvider } from './irDocument';
import { showLayout, type LayoutPanels } from './layoutView';
import type { IrRequest } from './irUri';
import type { KernelInfo, KernelsResult, ServerLink } from './protocol';
import { isCpuTarget, primaryTarget, readSettings } from './settings';
import { runWithProgress, type RunKind } from './verify';

export interface CommandContext {
  link(): ServerLink | undefined;
  provider: IrDocumentProvider;
  linker: LineLinker;
  results: vscode.OutputChannel;
  /** Push the current settings to the server before a request that depends on them. */
  syncSettings?: () => Promise<void>;
}

/** The stages a kernel can be shown at, for a target. */
export function stagesFor(kernel: KernelInfo | undefined, target: string): string[] {
  if (kernel?.stages && kernel.stages.length > 0) {
    return kernel.stages;
  }
  return isCpuTarget(target) ? DEFAULT_CPU_STAGES : DEFAULT_CUDA_STAGES;
}

/** The generated-code stage Show CUDA opens: `cuda`, else the last stage (`llvm` for the CPU). */
export function codeStage(stages: readonly string[]): string {
  return stages.includes('cuda') ? 'cuda' : (stages[stages.length - 1] ?? 'cuda');
}

function requireLink(ctx: CommandContext): ServerLink | undefined {
  const link = ctx.link();
  if (!link) {
    void vscode.window.showWarningMessage('TileLang: the tilelsp server is not running.', 'Restart Server').then((c) => {
      if (c) {
        void vscode.commands.executeCommand('tilelsp.restartServer');
      }
    });
  }
  return link;
}

function resolveTarget(args: unknown[]): CommandTarget | undefined {
  const target = parseCommandTarget(args, vscode.window.activeTextEditor?.document.uri);
  if (!target) {
    void vscode.window.showInformationMessage('TileLang: open a Python file with a TileLang kernel first.');
  }
  return target;
}

function cursorLine(uri: string): number | undefined {
  const editor = vscode.window.activeTextEditor;
  return editor && editor.document.uri.toString() === uri ? editor.selection.active.line : undefined;
}

/** Open the source document (without showing it) so the server knows it, e.g. from an IR view whose source tab was closed. */
async function ensureOpen(uri: string): Promise<void> {
  if (!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri)) {
    await Promise.resolve(vscode.workspace.openTextDocument(vscode.Uri.parse(uri))).catch(() => undefined);
  }
}

/** Ask the server for the file's kernels; undefined (after telling the user) when there are none. */
export async function fetchKernels(link: ServerLink, uri: string): Promise<KernelInfo[] | undefined> {
  try {
    const result = await link.request<KernelsResult | null>(Requests.kernels, { textDocument: { uri } });
    const kernels = result?.kernels ?? [];
    if (kernels.length === 0) {
      void vscode.window.showInformationMessage('TileLang: no kernels found in this file.');
      return undefined;
    }
    return kernels;
  } catch (err) {
    void vscode.window.showErrorMessage(`TileLang: listing kernels failed: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** The kernel the caller named, the only one, or the user's choice (the one under the cursor first). */
export async function pickKernel(kernels: readonly KernelInfo[], named: string | undefined, line?: number): Promise<KernelInfo | undefined> {
  if (named) {
    return kernels.find((k) => k.name === named) ?? { name: named, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } };
  }
  if (kernels.length === 1) {
    return kernels[0];
  }
  const items = orderKernels(kernels, line).map((k) => ({
    label: k.name,
    description: k.factory ? `in ${k.factory}()` : undefined,
    detail: `line ${k.range.start.line + 1}`,
    kernel: k,
  }));
  return (await vscode.window.showQuickPick(items, { placeHolder: 'Kernel' }))?.kernel;
}

async function pickFromList(values: readonly string[], placeHolder: string): Promise<string | undefined> {
  return values.length <= 1 ? values[0] : vscode.window.showQuickPick([...values], { placeHolder });
}

/** Work out the kernel (asking if needed): shared by every command. */
export async function chooseKernel(ctx: CommandContext, args: unknown[]): Promise<{ link: ServerLink; uri: string; kernel: KernelInfo } | undefined> {
  const link = requireLink(ctx);
  const target = link && resolveTarget(args);
  if (!link || !target) {
    return undefined;
  }
  await ensureOpen(target.uri);
  const kernels = target.kernel ? [] : await fetchKernels(link, target.uri);
  if (!kernels) {
    return undefined;
  }
  const kernel = await pickKernel(kernels, target.kernel, cursorLine(target.uri));
  return kernel && { link, uri: target.uri, kernel };
}

/** Kernel details (stages, instances, range) for a kernel named by a code lens. */
async function describeKernel(link: ServerLink, uri: string, kernel: KernelInfo): Promise<KernelInfo> {
  if (kernel.stages || kernel.instances) {
    return kernel;
  }
  const listed = await link.request<KernelsResult | null>(Requests.kernels, { textDocument: { uri } }).catch(() => null);
  return listed?.kernels.find((k) => k.name === kernel.name) ?? kernel;
}

async function irRequest(ctx: CommandContext, args: unknown[], askStage: boolean): Promise<{ req: IrRequest; kernel: KernelInfo } | undefined> {
  const chosen = await chooseKernel(ctx, args);
  if (!chosen) {
    return undefined;
  }
  const kernel = await describeKernel(chosen.link, chosen.uri, chosen.kernel);
  const target = primaryTarget(readSettings(vscode.workspace.getConfiguration(SECTION)));
  const stages = stagesFor(kernel, target);
  const stage = askStage ? await vscode.window.showQuickPick(stages, { placeHolder: `Stage of ${kernel.name} (${target})` }) : codeStage(stages);
  if (!stage) {
    return undefined;
  }
  const instances = kernel.instances ?? [];
  const instance = instances.length > 1 ? await pickFromList(instances, 'Instance (parameter values)') : undefined;
  if (instances.length > 1 && !instance) {
    return undefined;
  }
  const req: IrRequest = { source: chosen.uri, kernel: kernel.name, stage, target };
  if (instance) {
    req.instance = instance;
  }
  return { req, kernel };
}

/** `tilelsp.showIR`: pick kernel and stage, open the read-only view. */
export async function showIR(ctx: CommandContext, ...args: unknown[]): Promise<vscode.TextEditor | undefined> {
  const chosen = await irRequest(ctx, args, true);
  return chosen && openIrView(ctx.provider, chosen.req, vscode.ViewColumn.Active, false);
}

/**
 * `tilelsp.showCuda [uri, kernel, line?]`: open the generated code beside the source and link the cursor to it; with
 * a 0-based source `line` (a hover's link), the cursor moves there, so that statement's CUDA lines are highlighted.
 */
export async function showCuda(ctx: CommandContext, ...args: unknown[]): Promise<vscode.TextEditor | undefined> {
  const chosen = await irRequest(ctx, args, false);
  if (!chosen) {
    return undefined;
  }
  const source = vscode.Uri.parse(chosen.req.source);
  if (!vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === source.toString())) {
    await vscode.window.showTextDocument(source, { viewColumn: vscode.ViewColumn.Active });
  }
  const line = args[2];
  if (typeof line === 'number' && Number.isInteger(line) && line >= 0) {
    for (const editor of vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === source.toString())) {
      editor.selection = new vscode.Selection(line, 0, line, 0);
      editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }
  const editor = await openIrView(ctx.provider, chosen.req, vscode.ViewColumn.Beside, true);
  const { start, end } = chosen.kernel.range;
  const window = start.line === 0 && end.line === 0 ? undefined : { start: start.line, end: end.line };
  ctx.linker.link(source, editor.document.uri, window);
  return editor;
}

/** `tilelsp.showLayout [uri, kernel, buffer?]`: pick the kernel; a webview beside the source shows its layouts. */
export async function showLayoutCommand(ctx: CommandContext, panels: LayoutPanels, ...args: unknown[]): Promise<vscode.WebviewPanel | undefined> {
  const chosen = await chooseKernel(ctx, args);
  const buffer = typeof args[2] === 'string' && args[2] ? args[2] : undefined;
  return showLayout(panels, chosen && { link: chosen.link, uri: chosen.uri, kernel: chosen.kernel.name }, buffer);
}

/** Ask before running user code: VS Code's workspace trust, then the `tilelsp.trustWorkspace` setting. */
export async function ensureTrusted(): Promise<boolean> {
  if (!vscode.workspace.isTrusted) {
    const manage = 'Manage Workspace Trust';
    if ((await vscode.window.showWarningMessage('TileLang: Verify and Benchmark run code from your files; this workspace is in Restricted Mode.', manage)) === manage) {
      await vscode.commands.executeCommand('workbench.trust.manage');
    }
    return false;
  }
  const config = vscode.workspace.getConfiguration(SECTION);
  if (readSettings(config).trustWorkspace) {
    return true;
  }
  const allow = 'Allow and Run';
  const choice = await vscode.window.showWarningMessage(
    'TileLang: Verify and Benchmark run this file\'s kernel factory and reference code in a worker process. Allow tilelsp to run code from this workspace?',
    { modal: true },
    allow,
  );
  if (choice !== allow) {
    return false;
  }
  const scope = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update('trustWorkspace', true, scope);
  return true;
}

/** `tilelsp.verify` / `tilelsp.benchmark`: run the server command with progress; results go to the output channel. */
export async function runKernel(ctx: CommandContext, kind: RunKind, ...args: unknown[]): Promise<void> {
  const chosen = await chooseKernel(ctx, args);
  if (!chosen || !(await ensureTrusted())) {
    return;
  }
  await ctx.syncSettings?.();
  await runWithProgress(chosen.link, kind, chosen.uri, chosen.kernel.name, ctx.results);
}
