/** The `tilelsp.*` settings: reading them with defaults, the config the server receives, and which changes need a restart. */

export type VerifyDevice = 'auto' | 'cpu' | 'cuda';
export type TraceLevel = 'off' | 'messages' | 'verbose';

export interface Settings {
  interpreter: string;
  targets: string[];
  checkOnChange: boolean;
  debounceMs: number;
  lowerOnSave: boolean;
  verifyDevice: VerifyDevice;
  trustWorkspace: boolean;
  workerTimeoutSec: number;
  rayAddress: string;
  trace: TraceLevel;
}

/** What the server sees: the settings it owns, without the client-only ones; `tilelsp.ray.address` as `ray.address`. */
export type ServerConfig = Omit<Settings, 'interpreter' | 'trace' | 'rayAddress'> & { ray: { address: string } };

export const DEFAULTS: Settings = {
  interpreter: '',
  targets: ['sm_90a'],
  checkOnChange: true,
  debounceMs: 200,
  lowerOnSave: true,
  verifyDevice: 'auto',
  trustWorkspace: false,
  workerTimeoutSec: 60,
  rayAddress: '',
  trace: 'off',
};

/** Settings that the running server cannot pick up: changing them restarts it. */
export const RESTART_KEYS = ['interpreter'] as const;

/** A `WorkspaceConfiguration`-like reader for the `tilelsp` section. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

const TARGET_RE = /^(sm_\d+a?|cpu|llvm)$/;

function pick<T>(value: unknown, fallback: T, valid: (v: unknown) => boolean): T {
  return valid(value) ? (value as T) : fallback;
}

function intIn(lo: number, hi: number): (v: unknown) => boolean {
  return (v) => typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi;
}

/** Clean a targets list: keep valid arch names in order, drop duplicates; fall back to the default. */
export function normalizeTargets(value: unknown): string[] {
  if (!Array.isArray(value)) {
    return [...DEFAULTS.targets];
  }
  const seen: string[] = [];
  for (const item of value) {
    const t = typeof item === 'string' ? item.trim() : '';
    if (TARGET_RE.test(t) && !seen.includes(t)) {
      seen.push(t);
    }
  }
  return seen.length > 0 ? seen : [...DEFAULTS.targets];
}

/** Read every setting, replacing missing or invalid values with the defaults. */
export function readSettings(config: ConfigReader): Settings {
  const isBool = (v: unknown) => typeof v === 'boolean';
  return {
    interpreter: pick(config.get('interpreter'), DEFAULTS.interpreter, (v) => typeof v === 'string').trim(),
    targets: normalizeTargets(config.get('targets')),
    checkOnChange: pick(config.get('checkOnChange'), DEFAULTS.checkOnChange, isBool),
    debounceMs: pick(config.get('debounceMs'), DEFAULTS.debounceMs, intIn(0, 60_000)),
    lowerOnSave: pick(config.get('lowerOnSave'), DEFAULTS.lowerOnSave, isBool),
    verifyDevice: pick(config.get('verifyDevice'), DEFAULTS.verifyDevice, (v) => v === 'auto' || v === 'cpu' || v === 'cuda'),
    trustWorkspace: pick(config.get('trustWorkspace'), DEFAULTS.trustWorkspace, isBool),
    workerTimeoutSec: pick(config.get('workerTimeoutSec'), DEFAULTS.workerTimeoutSec, intIn(1, 86_400)),
    rayAddress: pick(config.get('ray.address'), DEFAULTS.rayAddress, (v) => typeof v === 'string').trim(),
    trace: pick(config.get('trace.server'), DEFAULTS.trace, (v) => v === 'off' || v === 'messages' || v === 'verbose'),
  };
}

/** The configuration sent to the server as initializationOptions (the same keys it pulls via workspace/configuration). */
export function serverConfig(settings: Settings, workspaceTrusted = true): ServerConfig {
  const { interpreter: _i, trace: _t, rayAddress, ...rest } = settings;
  return {
    ...rest,
    targets: [...settings.targets],
    trustWorkspace: settings.trustWorkspace && workspaceTrusted,
    ray: { address: rayAddress },
  };
}

/** True when a configuration change touches a setting that needs a server restart. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(`tilelsp.${key}`));
}

/** The first target: the one Show IR and Show CUDA lower for. */
export function primaryTarget(settings: Settings): string {
  return settings.targets[0] ?? DEFAULTS.targets[0];
}

/** True when a target lowers to LLVM for the CPU rather than to CUDA. */
export function isCpuTarget(target: string): boolean {
  return target === 'cpu' || target === 'llvm';
}
