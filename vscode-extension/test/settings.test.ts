import { describe, expect, it } from 'vitest';
import { answerConfiguration } from '../src/serverConfig';
import { DEFAULTS, needsRestart, normalizeTargets, primaryTarget, readSettings, serverConfig, type ConfigReader } from '../src/settings';

const reader = (values: Record<string, unknown>): ConfigReader => ({ get: <T>(k: string) => values[k] as T | undefined });

describe('settings', () => {
  it('uses the defaults when nothing is set', () => {
    expect(readSettings(reader({}))).toEqual(DEFAULTS);
  });

  it('keeps valid values and replaces invalid ones with defaults', () => {
    const s = readSettings(
      reader({ targets: ['sm_80', 'bogus', 'sm_80', 'sm_90a'], debounceMs: -5, workerTimeoutSec: 30, verifyDevice: 'tpu', lowerOnSave: false, 'trace.server': 'verbose', interpreter: ' /py ' }),
    );
    expect(s.targets).toEqual(['sm_80', 'sm_90a']);
    expect(s.debounceMs).toBe(200);
    expect(s.workerTimeoutSec).toBe(30);
    expect(s.verifyDevice).toBe('auto');
    expect(s.lowerOnSave).toBe(false);
    expect(s.trace).toBe('verbose');
    expect(s.interpreter).toBe('/py');
    expect(primaryTarget(s)).toBe('sm_80');
  });

  it('normalizes targets', () => {
    expect(normalizeTargets('sm_90a')).toEqual(['sm_90a']);
    expect(normalizeTargets([])).toEqual(['sm_90a']);
    expect(normalizeTargets([' cpu ', 'sm_86'])).toEqual(['cpu', 'sm_86']);
  });

  it('sends only server settings, and no trust while VS Code does not trust the workspace', () => {
    const s = { ...DEFAULTS, trustWorkspace: true, interpreter: '/py' };
    const cfg = serverConfig(s, true);
    expect(cfg).not.toHaveProperty('interpreter');
    expect(cfg).not.toHaveProperty('trace');
    expect(cfg.trustWorkspace).toBe(true);
    expect(serverConfig(s, false).trustWorkspace).toBe(false);
    expect(Object.keys(cfg).sort()).toEqual(['checkOnChange', 'debounceMs', 'lowerOnSave', 'ray', 'targets', 'trustWorkspace', 'verifyDevice', 'workerTimeoutSec']);
  });

  it('sends tilelsp.ray.address as ray.address, where the server reads it', () => {
    const s = readSettings(reader({ 'ray.address': ' ray://head:10001 ' }));
    expect(s.rayAddress).toBe('ray://head:10001');
    expect(serverConfig(s).ray).toEqual({ address: 'ray://head:10001' });
    expect(serverConfig(DEFAULTS).ray).toEqual({ address: '' });
  });

  it('restarts only for the interpreter setting', () => {
    expect(needsRestart((s) => s === 'tilelsp.interpreter')).toBe(true);
    expect(needsRestart((s) => s === 'tilelsp.targets')).toBe(false);
    expect(needsRestart(() => false)).toBe(false);
  });
});

describe('workspace/configuration answers', () => {
  const read = () => reader({ targets: ['sm_80'], trustWorkspace: true, debounceMs: 'fast' });

  it('answers the tilelsp section with validated settings and leaves other sections alone', () => {
    const out = answerConfiguration([{ section: 'tilelsp' }, { section: 'python' }], [{ raw: 1 }, { py: 2 }], read, true) as Record<string, unknown>[];
    expect(out[0]).toMatchObject({ targets: ['sm_80'], trustWorkspace: true, debounceMs: 200 });
    expect(out[1]).toEqual({ py: 2 });
  });

  it('answers a single key and withholds trust in Restricted Mode', () => {
    const out = answerConfiguration([{ section: 'tilelsp.trustWorkspace' }, { section: 'tilelsp.targets' }, { section: 'tilelsp.unknown' }], [true, null, 'x'], read, false);
    expect(out).toEqual([false, ['sm_80'], 'x']);
  });

  it('answers a dotted key from the nested answer', () => {
    const withRay = () => reader({ 'ray.address': 'local' });
    expect(answerConfiguration([{ section: 'tilelsp.ray.address' }, { section: 'tilelsp.ray' }], [null, null], withRay, true)).toEqual(['local', { address: 'local' }]);
  });
});
