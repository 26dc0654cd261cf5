/**
 * The stub `vscode` module made lenient enough for vscode-languageclient: unknown events, registrations and
 * classes become no-ops. Installed as Node's `vscode` module so the (externalized) language client loads it.
 */
import Module from 'node:module';
import * as stub from './vscode';

const noopDisposable = () => ({ dispose: () => undefined });

/** Any object whose every method is a no-op returning undefined (diagnostic collections, watchers, …). */
function sink(): unknown {
  const store = new Map<string, unknown>();
  return new Proxy(
    {},
    {
      get: (_t, prop) => {
        if (prop === 'then') {
          return undefined;
        }
        if (prop === 'get') {
          return (k: { toString(): string }) => store.get(k.toString());
        }
        if (prop === 'set') {
          return (k: { toString(): string }, v: unknown) => void store.set(k.toString(), v);
        }
        if (typeof prop === 'string' && prop.startsWith('onDid')) {
          return () => noopDisposable();
        }
        return () => undefined;
      },
    },
  );
}

function lenientNamespace<T extends object>(target: T): T {
  return new Proxy(target, {
    get: (t, prop, receiver) => {
      if (prop in t) {
        return Reflect.get(t, prop, receiver);
      }
      if (typeof prop !== 'string') {
        return undefined;
      }
      if (/^on(Did|Will)/.test(prop)) {
        return () => noopDisposable();
      }
      if (/^(register|create)/.test(prop)) {
        return () => sink();
      }
      if (/Documents$|Editors$|Folders$/.test(prop)) {
        return [];
      }
      return undefined;
    },
  });
}

/** A generic class for value types the client builds (Diagnostic, Hover, CodeLens, …). */
class Value {
  constructor(...args: unknown[]) {
    Object.assign(this, { args });
  }
}

const enumProxy = new Proxy({}, { get: (_t, prop) => (typeof prop === 'string' ? prop : undefined) });

export const host = new Proxy(
  {
    ...stub,
    workspace: lenientNamespace(stub.workspace),
    window: lenientNamespace({ ...stub.window, tabGroups: { all: [], onDidChangeTabs: () => noopDisposable(), onDidChangeTabGroups: () => noopDisposable() } }),
    languages: lenientNamespace({ ...stub.languages, createDiagnosticCollection: () => sink() }),
    commands: stub.commands,
    env: { appName: 'stub', language: 'en', machineId: 'stub', sessionId: 'stub', uiKind: 1, openExternal: async () => true },
    version: '1.91.0',
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    CancellationError: class CancellationError extends Error {},
  } as Record<string, unknown>,
  {
    get: (t, prop) => {
      if (typeof prop !== 'string' || prop in t) {
        return t[prop as string];
      }
      return /^[A-Z]/.test(prop) ? (/(Kind|Severity|Tag|Trigger|Reason|Mode|Level|Type|Style|Behavior)$/.test(prop) ? enumProxy : Value) : lenientNamespace({});
    },
  },
);

/** Make `require('vscode')` return the host for the rest of the process. */
export function installVscodeModule(): void {
  const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const original = mod._load;
  mod._load = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? host : original.call(this, request, ...rest);
  };
}
