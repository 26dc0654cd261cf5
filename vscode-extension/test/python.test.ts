import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PYTHON,
  describeInterpreter,
  expandPath,
  fromPythonApi,
  fromWorkspaceVenv,
  probeFailureMessage,
  resolveInterpreter,
  serverArgv,
  type PythonExtensionApi,
} from '../src/python';

const newApi = (exe: string | undefined): PythonExtensionApi => ({
  environments: {
    getActiveEnvironmentPath: () => ({ path: '/envs/a' }),
    resolveEnvironment: async () => (exe ? { executable: { uri: { fsPath: exe } } } : undefined),
  },
});

describe('interpreter resolution', () => {
  it('prefers the tilelsp.interpreter setting over the Python extension', async () => {
    const interp = await resolveInterpreter('/opt/py/bin/python', newApi('/envs/a/bin/python'));
    expect(interp).toEqual({ command: '/opt/py/bin/python', args: [], source: 'setting' });
  });

  it('uses the Python extension environments API when the setting is empty', async () => {
    const interp = await resolveInterpreter('  ', newApi('/envs/a/bin/python'));
    expect(interp).toEqual({ command: '/envs/a/bin/python', args: [], source: 'python-extension' });
  });

  it('falls back to the legacy execution details API, keeping extra argv words', async () => {
    const api: PythonExtensionApi = {
      environments: { getActiveEnvironmentPath: () => undefined, resolveEnvironment: async () => undefined },
      settings: { getExecutionDetails: () => ({ execCommand: ['conda', 'run', '-n', 'tl', 'python'] }) },
    };
    const interp = await resolveInterpreter('', api);
    expect(interp).toEqual({ command: 'conda', args: ['run', '-n', 'tl', 'python'], source: 'python-extension' });
    expect(serverArgv(interp)).toEqual({ command: 'conda', args: ['run', '-n', 'tl', 'python', '-m', 'tilelsp', 'serve'] });
  });

  it('uses a .venv (then venv) of the workspace folder before python3', async () => {
    const has = (...paths: string[]) => (p: string) => paths.includes(p);
    const venv = path.join('/ws', '.venv', 'bin', 'python');
    const plain = path.join('/ws', 'venv', 'bin', 'python');
    expect(await resolveInterpreter('', undefined, '/ws', undefined, has(venv, plain))).toEqual({ command: venv, args: [], source: 'workspace-venv' });
    expect((await resolveInterpreter('', undefined, '/ws', undefined, has(plain))).command).toBe(plain);
    expect((await resolveInterpreter('', newApi('/envs/a/bin/python'), '/ws', undefined, has(venv))).source).toBe('python-extension');
    expect(fromWorkspaceVenv(undefined)).toBeUndefined();
  });

  it('falls back to python3 without the Python extension, or when its API throws', async () => {
    expect(await resolveInterpreter('', undefined)).toEqual({ command: DEFAULT_PYTHON, args: [], source: 'default' });
    expect(await resolveInterpreter('', undefined, '/ws', undefined, () => false)).toEqual({ command: DEFAULT_PYTHON, args: [], source: 'default' });
    const broken: PythonExtensionApi = {
      environments: {
        getActiveEnvironmentPath: () => {
          throw new Error('not ready');
        },
        resolveEnvironment: async () => undefined,
      },
    };
    expect(await fromPythonApi(broken)).toBeUndefined();
    expect((await resolveInterpreter('', newApi(undefined))).source).toBe('default');
  });

  it('expands ~, ${workspaceFolder}, ${userHome} and ${env:NAME}', () => {
    expect(expandPath('~/venv/bin/python')).toBe(path.join(os.homedir(), 'venv/bin/python'));
    expect(expandPath('${workspaceFolder}/.venv/bin/python', '/ws')).toBe('/ws/.venv/bin/python');
    expect(expandPath('${userHome}/py', undefined)).toBe(`${os.homedir()}/py`);
    expect(expandPath('${env:VENV}/bin/python', undefined, { VENV: '/v' })).toBe('/v/bin/python');
    expect(expandPath('${workspaceFolder}/x', undefined)).toBe('${workspaceFolder}/x');
  });

  it('builds the server command line and a readable description', () => {
    const interp = { command: '/usr/bin/python3', args: [], source: 'default' as const };
    expect(serverArgv(interp)).toEqual({ command: '/usr/bin/python3', args: ['-m', 'tilelsp', 'serve'] });
    expect(describeInterpreter(interp)).toBe('/usr/bin/python3 (default)');
  });
});

describe('probe failure messages', () => {
  const interp = { command: 'python9', args: [], source: 'setting' as const };

  it('names a missing interpreter and the setting to change', () => {
    const msg = probeFailureMessage(interp, { code: 'ENOENT' }, '');
    expect(msg).toContain('"python9" was not found');
    expect(msg).toContain('tilelsp.interpreter');
  });

  it('says how to install tilelsp when the module is missing', () => {
    const msg = probeFailureMessage(interp, { code: 1 }, "Traceback...\nModuleNotFoundError: No module named 'tilelsp'\n");
    expect(msg).toContain('tilelsp is not installed for "python9"');
    expect(msg).toContain('python9 -m pip install');
  });

  it('shows the last stderr line otherwise', () => {
    const msg = probeFailureMessage(interp, { code: 1 }, 'a\nImportError: libfoo.so missing\n');
    expect(msg).toMatch(/failed: ImportError: libfoo.so missing$/);
  });
});
