/** Finds the Python interpreter that runs the server: the setting, the Python extension's choice, a workspace venv, python3. */

import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type InterpreterSource = 'setting' | 'python-extension' | 'workspace-venv' | 'default';

export interface Interpreter {
  /** The executable. */
  command: string;
  /** Arguments before `-m tilelsp serve` (e.g. from `conda run -n env python`). */
  args: string[];
  source: InterpreterSource;
}

export const DEFAULT_PYTHON = process.platform === 'win32' ? 'python' : 'python3';

/** Expand `~`, `${workspaceFolder}`, `${userHome}` and `${env:NAME}` in a path setting. */
export function expandPath(value: string, workspaceFolder?: string, env: NodeJS.ProcessEnv = process.env): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) {
      return env[envName] ?? '';
    }
    if (name === 'userHome') {
      return os.homedir();
    }
    return workspaceFolder ?? whole;
  });
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
    out = path.join(os.homedir(), out.slice(1));
  }
  return out;
}

/** The interpreter named by the `tilelsp.interpreter` setting, or undefined when it is empty. */
export function fromSetting(value: string, workspaceFolder?: string): Interpreter | undefined {
  const text = value.trim();
  if (!text) {
    return undefined;
  }
  return { command: expandPath(text, workspaceFolder), args: [], source: 'setting' };
}

/** The parts of the `ms-python.python` extension API used here (new environments API and the legacy settings API). */
export interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
    resolveEnvironment(env: unknown): Promise<{ executable?: { uri?: { fsPath: string } } } | undefined>;
    onDidChangeActiveEnvironmentPath?: (listener: () => void) => { dispose(): void };
  };
  settings?: {
    getExecutionDetails(resource?: unknown): { execCommand?: string[] | undefined };
    onDidChangeExecutionDetails?: (listener: () => void) => { dispose(): void };
  };
}

/** Ask the Python extension for its active interpreter; undefined when it has none or fails. */
export async function fromPythonApi(api: PythonExtensionApi | undefined, resource?: unknown): Promise<Interpreter | undefined> {
  if (!api) {
    return undefined;
  }
  try {
    const envs = api.environments;
    const active = envs?.getActiveEnvironmentPath(resource);
    if (envs && active) {
      const resolved = await envs.resolveEnvironment(active);
      const exe = resolved?.executable?.uri?.fsPath;
      if (exe) {
        return { command: exe, args: [], source: 'python-extension' };
      }
    }
    const exec = api.settings?.getExecutionDetails(resource)?.execCommand;
    if (exec && exec.length > 0 && exec[0]) {
      return { command: exec[0], args: exec.slice(1), source: 'python-extension' };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** A `.venv` or `venv` interpreter in the workspace folder, if there is one. */
export function fromWorkspaceVenv(workspaceFolder: string | undefined, exists: (p: string) => boolean = existsSync): Interpreter | undefined {
  if (!workspaceFolder) {
    return undefined;
  }
  const exe = process.platform === 'win32' ? path.join('Scripts', 'python.exe') : path.join('bin', 'python');
  const found = ['.venv', 'venv'].map((d) => path.join(workspaceFolder, d, exe)).find((p) => exists(p));
  return found ? { command: found, args: [], source: 'workspace-venv' } : undefined;
}

/** Pick the interpreter: setting, then the Python extension, then a workspace venv, then `python3`. */
export async function resolveInterpreter(
  setting: string,
  api: PythonExtensionApi | undefined,
  workspaceFolder?: string,
  resource?: unknown,
  exists?: (p: string) => boolean,
): Promise<Interpreter> {
  return (
    fromSetting(setting, workspaceFolder) ??
    (await fromPythonApi(api, resource)) ??
    fromWorkspaceVenv(workspaceFolder, exists) ?? { command: DEFAULT_PYTHON, args: [], source: 'default' }
  );
}

/** The full argv that starts the server over stdio. */
export function serverArgv(interp: Interpreter): { command: string; args: string[] } {
  return { command: interp.command, args: [...interp.args, '-m', 'tilelsp', 'serve'] };
}

/** A one-line description of an interpreter for the status bar and logs. */
export function describeInterpreter(interp: Interpreter): string {
  const where = { setting: 'tilelsp.interpreter', 'python-extension': 'Python extension', 'workspace-venv': 'workspace venv', default: 'default' }[interp.source];
  return `${[interp.command, ...interp.args].join(' ')} (${where})`;
}

/** Turn a failed `python -c "import tilelsp"` probe into a message that names the fix. */
export function probeFailureMessage(interp: Interpreter, error: { code?: unknown; message?: string }, stderr: string): string {
  const exe = [interp.command, ...interp.args].join(' ');
  if (error.code === 'ENOENT') {
    return `TileLang: Python interpreter "${exe}" was not found. Set "tilelsp.interpreter" to a Python that has tilelsp installed.`;
  }
  if (/No module named ['"]?tilelsp/.test(stderr)) {
    return `TileLang: tilelsp is not installed for "${exe}". Install it with "${exe} -m pip install <path to the tilelsp checkout>" or choose another interpreter.`;
  }
  const last = stderr.trim().split(/\r?\n/).pop() ?? error.message ?? 'unknown error';
  return `TileLang: "${exe} -c 'import tilelsp'" failed: ${last}`;
}
