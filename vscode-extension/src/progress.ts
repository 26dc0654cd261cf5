/** Progress the server creates (window/workDoneProgress/create): handed to the run waiting for it, else shown alone. */

import * as vscode from 'vscode';
import type { ProgressClaim, ProgressToken, ProgressValue, ServerLink } from './protocol';

type Sink = (value: ProgressValue) => void;

interface Waiting {
  sink: Sink;
  tokens: ProgressToken[];
  subscriptions: { dispose(): void }[];
}

export class ProgressRouter {
  private readonly waiting: Waiting[] = [];

  /** Send the server's next progress tokens to `sink` (the newest claim wins) until the claim is disposed. */
  claim(sink: Sink): ProgressClaim {
    const entry: Waiting = { sink, tokens: [], subscriptions: [] };
    this.waiting.push(entry);
    return {
      tokens: entry.tokens,
      dispose: () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) {
          this.waiting.splice(at, 1);
        }
        entry.subscriptions.splice(0).forEach((s) => s.dispose());
      },
    };
  }

  /** The server created `token`: route it to the newest claim; false when nobody waits. */
  created(token: ProgressToken, link: Pick<ServerLink, 'onProgress'>): boolean {
    const entry = this.waiting[this.waiting.length - 1];
    if (!entry) {
      return false;
    }
    try {
      entry.subscriptions.push(link.onProgress(token, entry.sink));
    } catch {
      return false; // someone already listens to this token
    }
    entry.tokens.push(token);
    return true;
  }
}

/** Show server progress nobody claimed as its own notification (what vscode-languageclient does by default). */
export function showServerProgress(link: Pick<ServerLink, 'onProgress' | 'notify'>, token: ProgressToken): void {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let reporter: vscode.Progress<{ message?: string; increment?: number }> | undefined;
  const start = (begin: ProgressValue) => {
    const options = { location: vscode.ProgressLocation.Notification, title: begin.title, cancellable: begin.cancellable === true };
    void vscode.window.withProgress(options, (progress, cancel) => {
      reporter = progress;
      if (begin.message) {
        progress.report({ message: begin.message });
      }
      cancel.onCancellationRequested(() => void link.notify('window/workDoneProgress/cancel', { token }));
      return done;
    });
  };
  const sub = link.onProgress(token, (v) => {
    if (v.kind === 'begin') {
      start(v);
    } else if (v.kind === 'report') {
      reporter?.report({ message: v.message });
    } else {
      sub.dispose();
      finish();
    }
  });
}
