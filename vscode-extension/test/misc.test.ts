import { afterEach, describe, expect, it, vi } from 'vitest';
import { statusText, statusTooltip } from '../src/statusBar';
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
