/** Types of the tilelsp custom requests and server commands (see the LSP protocol in the shared brief). */

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface KernelInfo {
  name: string;
  factory?: string | null;
  range: LspRange;
  nameRange?: LspRange;
  instances?: string[];
  stages?: string[];
}

export interface KernelsResult {
  kernels: KernelInfo[];
}

export interface LineMapEntry {
  /** 0-based source line. */
  source: number;
  /** 0-based lines of the IR text generated for it. */
  lines: number[];
}

export interface ShowIRParams {
  uri: string;
  kernel: string;
  stage: string;
  target?: string;
  instance?: string;
}

export interface ShowIRResult {
  text: string;
  languageId: string;
  stage: string;
  kernel: string;
  target?: string;
  lineMap?: LineMapEntry[];
}

export interface VerifyResult {
  passed?: boolean | null;
  maxAbsErr?: number | null;
  maxRelErr?: number | null;
  timeMs?: number | null;
  device?: string | null;
  message?: string | null;
}

/** A cancellation signal: the subset of `vscode.CancellationToken` the extension's logic needs. */
export interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

export type ProgressToken = string | number;

/** The slice of the language client the commands use; the real one wraps `LanguageClient`. */
export interface ServerLink {
  request<R>(method: string, params: unknown, token?: Cancellation): Promise<R>;
  notify(method: string, params: unknown): Promise<void>;
  onProgress(token: ProgressToken, handler: (value: ProgressValue) => void): { dispose(): void };
  /** Route progress the server creates itself (window/workDoneProgress/create) to `sink` until disposed. */
  claimProgress?(sink: (value: ProgressValue) => void): ProgressClaim;
}

export interface ProgressClaim {
  /** The server-created tokens routed so far. */
  readonly tokens: readonly ProgressToken[];
  dispose(): void;
}

export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}
