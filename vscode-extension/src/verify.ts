/** Verify and Benchmark: run the server command with a cancellable progress notification and log the result. */

import * as vscode from 'vscode';
import { ServerCommands } from './constants';
import type { Cancellation, ProgressValue, ServerLink, VerifyResult } from './protocol';

export type RunKind = 'verify' | 'benchmark';

export interface RunOutcome {
  status: 'done' | 'cancelled' | 'failed';
  result?: VerifyResult;
  error?: string;
}

let tokenCounter = 0;

function fmtNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return 'n/a';
  }
  return Math.abs(value) !== 0 && (Math.abs(value) < 1e-3 || Math.abs(value) >= 1e5) ? value.toExponential(2) : value.toFixed(digits);
}

/** One-line verdict for a verify/benchmark result. */
export function summarize(kind: RunKind, kernel: string, result: VerifyResult): string {
  const verdict = result.passed === true ? 'passed' : result.passed === false ? 'FAILED' : 'finished';
  const parts = [`${kind === 'verify' ? 'Verify' : 'Benchmark'} ${kernel}: ${verdict}`];
  if (result.device) {
    parts.push(`on ${result.device}`);
  }
  if (typeof result.timeMs === 'number') {
    parts.push(`${fmtNumber(result.timeMs)} ms`);
  }
  return parts.join(', ');
}

/** The lines written to the output channel for one run. */
export function formatResult(kind: RunKind, kernel: string, file: string, outcome: RunOutcome, now = new Date()): string[] {
  const head = `[${now.toISOString()}] ${kind} ${kernel} (${file})`;
  if (outcome.status === 'cancelled') {
    return [`${head}: cancelled`];
  }
  if (outcome.status === 'failed' || !outcome.result) {
    return [`${head}: error: ${outcome.error ?? 'no result'}`];
  }
  const r = outcome.result;
  const lines = [`${head}: ${summarize(kind, kernel, r)}`];
  lines.push(`  max abs err  ${fmtNumber(r.maxAbsErr)}`);
  lines.push(`  max rel err  ${fmtNumber(r.maxRelErr)}`);
  lines.push(`  time         ${typeof r.timeMs === 'number' ? `${fmtNumber(r.timeMs)} ms` : 'n/a'}`);
  lines.push(`  device       ${r.device ?? 'n/a'}`);
  if (r.message) {
    lines.push(...r.message.split(/\r?\n/).map((l) => `  ${l}`));
  }
  return lines;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isCancellation(err: unknown): boolean {
  const e = err as { name?: string; code?: number; message?: string };
  return e?.name === 'Canceled' || e?.name === 'CancellationError' || e?.code === -32800 || e?.message === 'Canceled';
}

/** Send the server command; resolves as soon as the token is cancelled (the server gets $/cancelRequest). */
export async function executeRun(
  link: ServerLink,
  kind: RunKind,
  uri: string,
  kernel: string,
  token: Cancellation,
  onMessage: (message: string, percentage?: number) => void,
): Promise<RunOutcome> {
  // Distinct from the tokens the server makes up (`tilelsp-verify-<n>`): one handler per token is allowed.
  const workDoneToken = `vscode-${kind}-${process.pid}-${++tokenCounter}`;
  const sink = (v: ProgressValue) => {
    if (v.kind !== 'end' && (v.message || v.title)) {
      onMessage(v.message ?? v.title ?? '', v.percentage);
    }
  };
  const progress = link.onProgress(workDoneToken, sink);
  const claim = link.claimProgress?.(sink);
  let cancelSub: { dispose(): void } | undefined;
  const cancelled = new Promise<RunOutcome>((resolve) => {
    cancelSub = token.onCancellationRequested(() => {
      for (const t of claim?.tokens ?? []) {
        void link.notify('window/workDoneProgress/cancel', { token: t }).catch(() => undefined);
      }
      resolve({ status: 'cancelled' });
    });
  });
  const params = { command: ServerCommands[kind], arguments: [uri, kernel], workDoneToken };
  const request = link
    .request<VerifyResult | null>('workspace/executeCommand', params, token)
    .then((result): RunOutcome => (result ? { status: 'done', result } : { status: 'failed', error: 'the server returned no result' }))
    .catch((err): RunOutcome => (token.isCancellationRequested || isCancellation(err) ? { status: 'cancelled' } : { status: 'failed', error: errorText(err) }));
  try {
    return token.isCancellationRequested ? { status: 'cancelled' } : await Promise.race([request, cancelled]);
  } finally {
    progress.dispose();
    claim?.dispose();
    cancelSub?.dispose();
  }
}

/** Run verify/benchmark under a cancellable notification; write the result to `output` and tell the user. */
export async function runWithProgress(
  link: ServerLink,
  kind: RunKind,
  uri: string,
  kernel: string,
  output: vscode.OutputChannel,
): Promise<RunOutcome> {
  const file = vscode.Uri.parse(uri).path.split('/').pop() ?? uri;
  const title = `TileLang: ${kind === 'verify' ? 'verifying' : 'benchmarking'} ${kernel}`;
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) => executeRun(link, kind, uri, kernel, token, (message) => progress.report({ message })),
  );
  for (const line of formatResult(kind, kernel, file, outcome)) {
    output.appendLine(line);
  }
  void announce(kind, kernel, outcome, output);
  return outcome;
}

async function announce(kind: RunKind, kernel: string, outcome: RunOutcome, output: vscode.OutputChannel): Promise<void> {
  if (outcome.status === 'cancelled') {
    return;
  }
  const show = 'Show Output';
  const text =
    outcome.status === 'failed' || !outcome.result
      ? `TileLang: ${kind} ${kernel} failed: ${outcome.error ?? 'no result'}`
      : outcome.result.passed === false && outcome.result.message
        ? `TileLang: ${summarize(kind, kernel, outcome.result)}: ${outcome.result.message.split(/\r?\n/)[0]}`
        : `TileLang: ${summarize(kind, kernel, outcome.result)}`;
  const failed = outcome.status === 'failed' || outcome.result?.passed === false;
  const choice = failed ? await vscode.window.showErrorMessage(text, show) : await vscode.window.showInformationMessage(text, show);
  if (choice === show) {
    output.show(true);
  }
}
