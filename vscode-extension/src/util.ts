/** Small helpers without a `vscode` dependency. */

export interface Debounced {
  (): void;
  cancel(): void;
}

/** Wait `ms` after the last call before running `fn` (settings often change in bursts). */
export function debounce(fn: () => void, ms: number): Debounced {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = (() => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  }) as Debounced;
  run.cancel = () => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
  };
  return run;
}
