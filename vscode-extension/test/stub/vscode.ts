/** A small in-memory stand-in for the `vscode` module: enough API for the extension's logic under test. */

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return new Disposable(() => (this.listeners = this.listeners.filter((l) => l !== listener)));
  };
  fire(value: T): void {
    [...this.listeners].forEach((l) => l(value));
  }
  dispose(): void {
    this.listeners = [];
  }
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encode like VS Code's Uri.toString does (everything but unreserved characters, `/` in paths). */
function encode(text: string, isPath: boolean): string {
  let out = '';
  for (const ch of text) {
    out += UNRESERVED.test(ch) || (isPath && ch === '/') ? ch : encodeURIComponent(ch);
  }
  return out;
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}

  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }

  static file(path: string): Uri {
    return new Uri('file', '', path, '', '');
  }

  static parse(value: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (!m) {
      throw new Error(`cannot parse ${value}`);
    }
    const dec = (s?: string) => decodeURIComponent(s ?? '');
    return new Uri(m[1], dec(m[2]), dec(m[3]), dec(m[4]), dec(m[5]));
  }

  get fsPath(): string {
    return this.path;
  }

  with(change: { scheme?: string; path?: string; query?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, change.query ?? this.query, this.fragment);
  }

  toString(): string {
    const auth = this.authority || this.scheme === 'file' ? `//${encode(this.authority, false)}` : '';
    const query = this.query ? `?${encode(this.query, false)}` : '';
    const fragment = this.fragment ? `#${encode(this.fragment, false)}` : '';
    return `${this.scheme}:${auth}${encode(this.path, true)}${query}${fragment}`;
  }

  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path, query: this.query };
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c as number, d as number) : (b as Position);
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
}

export class MarkdownString {
  constructor(readonly value = '') {}
}

export class Hover {
  constructor(readonly contents: MarkdownString) {}
}

export class Location {
  constructor(readonly uri: Uri, readonly range: Position | Range) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  private cancelled = false;
  readonly token: { readonly isCancellationRequested: boolean; onCancellationRequested(l: () => void): Disposable };
  constructor() {
    const state = this;
    this.token = {
      get isCancellationRequested(): boolean {
        return state.cancelled;
      },
      onCancellationRequested: (l: () => void) => state.emitter.event(l),
    };
  }
  cancel(): void {
    this.cancelled = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
  Two = 2,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}
export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}
export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}

/** A fake text document. */
export class TextDocument {
  version = 1;
  isClosed = false;
  isDirty = false;
  isUntitled = false;
  constructor(readonly uri: Uri, public text = '', public languageId = 'python') {}
  get lineCount(): number {
    return this.text.split('\n').length;
  }
  get fileName(): string {
    return this.uri.fsPath;
  }
  getText(): string {
    return this.text;
  }
  lineAt(line: number): { text: string } {
    return { text: this.text.split('\n')[line] ?? '' };
  }
}

/** A fake editor that records its decorations. */
export class TextEditor {
  selection = new Selection(0, 0, 0, 0);
  decorations = new Map<unknown, Range[]>();
  revealed: Range[] = [];
  constructor(readonly document: TextDocument, readonly viewColumn = 1) {}
  setDecorations(type: unknown, ranges: Range[]): void {
    this.decorations.set(type, ranges);
  }
  revealRange(range: Range): void {
    this.revealed.push(range);
  }
}

/** Settings store behind `workspace.getConfiguration`. */
export const settingsStore = new Map<string, unknown>();
export const configChanges = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();

function configuration(section: string) {
  const key = (k: string) => (section ? `${section}.${k}` : k);
  return {
    get<T>(k: string, fallback?: T): T | undefined {
      return settingsStore.has(key(k)) ? (settingsStore.get(key(k)) as T) : fallback;
    },
    has: (k: string) => settingsStore.has(key(k)),
    async update(k: string, value: unknown, _target?: ConfigurationTarget): Promise<void> {
      settingsStore.set(key(k), value);
      configChanges.fire({ affectsConfiguration: (s: string) => key(k) === s || key(k).startsWith(`${s}.`) });
    },
  };
}

const saveEmitter = new EventEmitter<TextDocument>();
const closeEmitter = new EventEmitter<TextDocument>();
const changeEmitter = new EventEmitter<{ document: TextDocument }>();
const selectionEmitter = new EventEmitter<{ textEditor: TextEditor }>();
const visibleEmitter = new EventEmitter<TextEditor[]>();
const providers = new Map<string, { provideTextDocumentContent(uri: Uri, token: unknown): Promise<string> | string }>();

export const workspace = {
  isTrusted: true,
  workspaceFolders: undefined as { uri: Uri }[] | undefined,
  textDocuments: [] as TextDocument[],
  getConfiguration: configuration,
  onDidChangeConfiguration: configChanges.event,
  onDidSaveTextDocument: saveEmitter.event,
  onDidCloseTextDocument: closeEmitter.event,
  onDidChangeTextDocument: changeEmitter.event,
  onDidGrantWorkspaceTrust: new EventEmitter<void>().event,
  registerTextDocumentContentProvider(scheme: string, provider: never) {
    providers.set(scheme, provider);
    return new Disposable(() => providers.delete(scheme));
  },
  async openTextDocument(uri: Uri): Promise<TextDocument> {
    const found = workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (found) {
      return found;
    }
    const provider = providers.get(uri.scheme);
    const text = provider ? await provider.provideTextDocumentContent(uri, new CancellationTokenSource().token) : '';
    const doc = new TextDocument(uri, text, 'plaintext');
    workspace.textDocuments.push(doc);
    return doc;
  },
};

export const window = {
  activeTextEditor: undefined as TextEditor | undefined,
  visibleTextEditors: [] as TextEditor[],
  onDidChangeTextEditorSelection: selectionEmitter.event,
  onDidChangeVisibleTextEditors: visibleEmitter.event,
  async showQuickPick(items: unknown[], _options?: unknown): Promise<unknown> {
    return items[0];
  },
  async showInformationMessage(..._args: unknown[]): Promise<string | undefined> {
    return undefined;
  },
  async showWarningMessage(..._args: unknown[]): Promise<string | undefined> {
    return undefined;
  },
  async showErrorMessage(..._args: unknown[]): Promise<string | undefined> {
    return undefined;
  },
  async showTextDocument(docOrUri: TextDocument | Uri, options?: { viewColumn?: number }): Promise<TextEditor> {
    const doc = docOrUri instanceof TextDocument ? docOrUri : await workspace.openTextDocument(docOrUri);
    const editor = new TextEditor(doc, options?.viewColumn ?? 1);
    window.visibleTextEditors.push(editor);
    return editor;
  },
  async withProgress<R>(_options: unknown, task: (progress: { report(v: unknown): void }, token: unknown) => Promise<R>): Promise<R> {
    const cts = new CancellationTokenSource();
    progressTokens.push(cts);
    return task({ report: (v) => progressReports.push(v) }, cts.token);
  },
  createOutputChannel(name: string) {
    const channel = new OutputChannel(name);
    channels.push(channel);
    return channel;
  },
  createTextEditorDecorationType(options: unknown) {
    return { options, dispose: () => undefined };
  },
  createStatusBarItem() {
    const item = { text: '', tooltip: '', show: () => undefined, dispose: () => undefined };
    statusItems.push(item);
    return item;
  },
  createWebviewPanel(viewType: string, title: string, showOptions: unknown, options: unknown): WebviewPanel {
    const panel = new WebviewPanel(viewType, title, showOptions, options);
    webviewPanels.push(panel);
    return panel;
  },
};

/** A webview panel that records its HTML, reveals and disposal. */
export class WebviewPanel {
  readonly webview = { html: '' };
  revealed = 0;
  disposed = false;
  private readonly disposeEmitter = new EventEmitter<void>();
  readonly onDidDispose = this.disposeEmitter.event;
  constructor(readonly viewType: string, public title: string, readonly showOptions: unknown, readonly options: unknown) {}
  reveal(): void {
    this.revealed += 1;
  }
  dispose(): void {
    this.disposed = true;
    this.disposeEmitter.fire();
  }
}

export const webviewPanels: WebviewPanel[] = [];

export const progressReports: unknown[] = [];
export const channels: OutputChannel[] = [];
export const statusItems: { text: string; tooltip: unknown }[] = [];
export const progressTokens: CancellationTokenSource[] = [];

export class OutputChannel {
  lines: string[] = [];
  shown = false;
  constructor(readonly name: string) {}
  appendLine(line: string): void {
    this.lines.push(line);
  }
  show(): void {
    this.shown = true;
  }
  info(line: string): void {
    this.lines.push(line);
  }
  warn(line: string): void {
    this.lines.push(`warn: ${line}`);
  }
  error(line: string): void {
    this.lines.push(`error: ${line}`);
  }
  debug(): void {}
  trace(): void {}
  append(text: string): void {
    this.lines.push(text);
  }
  replace(): void {}
  clear(): void {}
  hide(): void {}
  logLevel = 2;
  onDidChangeLogLevel = new EventEmitter<number>().event;
  dispose(): void {}
}

export const executed: unknown[][] = [];
export const registered = new Map<string, (...args: unknown[]) => unknown>();
export const commands = {
  async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    executed.push([id, ...args]);
    const handler = registered.get(id);
    return handler ? handler(...args) : undefined;
  },
  registerCommand(id: string, handler: (...args: unknown[]) => unknown): Disposable {
    registered.set(id, handler);
    return new Disposable(() => registered.delete(id));
  },
};

type Filter = { scheme?: string; language?: string };

export const languages = {
  registerHoverProvider: () => new Disposable(),
  registerDefinitionProvider: () => new Disposable(),
  match(selector: Filter | Filter[] | string, doc: TextDocument): number {
    const filters = (Array.isArray(selector) ? selector : [selector]).map((f) => (typeof f === 'string' ? { language: f } : f));
    return filters.some((f) => (!f.scheme || f.scheme === doc.uri.scheme) && (!f.language || f.language === doc.languageId)) ? 10 : 0;
  },
  async setTextDocumentLanguage(doc: TextDocument, language: string): Promise<TextDocument> {
    doc.languageId = language;
    return doc;
  },
};

export const extensions = {
  getExtension: (_id: string): unknown => undefined,
};

/** Test helpers: fire editor events and reset state. */
export const __test = {
  fireSave: (doc: TextDocument) => saveEmitter.fire(doc),
  fireSelection: (editor: TextEditor) => selectionEmitter.fire({ textEditor: editor }),
  fireChange: (doc: TextDocument) => changeEmitter.fire({ document: doc }),
  reset(): void {
    settingsStore.clear();
    workspace.textDocuments.length = 0;
    workspace.isTrusted = true;
    workspace.workspaceFolders = undefined;
    window.visibleTextEditors.length = 0;
    window.activeTextEditor = undefined;
    progressReports.length = 0;
    progressTokens.length = 0;
    webviewPanels.length = 0;
    executed.length = 0;
    registered.clear();
  },
};
