import { afterEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { selectTargets, statusText, statusTooltip, targetItems } from '../src/statusBar';
import * as stub from './stub/vscode';
import { debounce } from '../src/util';

afterEach(() => vi.useRealTimers());

describe('status bar', () => {
  it('shows the state and every target', () => {
    expect(statusText({ state: 'running' }, ['sm_90a', 'sm_80'])).toBe('$(check) TileLang sm_90a+sm_80');
    expect(statusText({ state: 'starting' }, ['sm_90a'])).toBe('$(loading~spin) TileLang sm_90a');
    expect(statusText({ state: 'failed' }, [])).toBe('$(error) TileLang no target');
  });

  it('explains the interpreter and the failure in the tooltip', () => {
    const tip = statusTooltip({ state: 'failed', interpreter: { command: '/py', args: [], source: 'setting' }, message: 'tilelsp is not installed' }, ['cpu']);
    expect(tip.split('\n')).toEqual(['tilelsp server: failed', 'Targets: cpu', 'Python: /py (tilelsp.interpreter)', 'tilelsp is not installed', 'Click for TileLang actions']);
  });
});

describe('debounce', () => {
  it('runs once after a burst of calls, and not at all when cancelled', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const run = debounce(fn, 500);
    run();
    vi.advanceTimersByTime(300);
    run();
    run();
    vi.advanceTimersByTime(499);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    run();
    run.cancel();
    vi.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe('select targets', () => {
  it('offers the known archs with the configured ones picked, keeping unknown configured ones', () => {
    const items = targetItems(['sm_80', 'sm_100a']);
    expect(items.filter((i) => i.picked).map((i) => i.label)).toEqual(['sm_80', 'sm_100a']);
    expect(items[0]).toEqual({ label: 'sm_90a', picked: false });
    expect(items.map((i) => i.label)).toContain('cpu');
  });

  it('writes the picked targets, configured order first', async () => {
    stub.__test.reset();
    stub.settingsStore.set('tilelsp.targets', ['sm_80', 'sm_90a']);
    vi.spyOn(vscode.window, 'showQuickPick').mockImplementation(async () => [{ label: 'sm_90a' }, { label: 'cpu' }, { label: 'sm_80' }] as never);
    expect(await selectTargets()).toEqual(['sm_80', 'sm_90a', 'cpu']);
    expect(stub.settingsStore.get('tilelsp.targets')).toEqual(['sm_80', 'sm_90a', 'cpu']);
  });
});
