/** Arguments of the client commands: `[uri, kernel]` from a code lens, a Uri from a menu, or nothing from the palette. */

import { decodeIrUri } from './irUri';
import type { KernelInfo, LspRange } from './protocol';

export interface CommandTarget {
  /** The source document's URI, as a string. */
  uri: string;
  /** The kernel, when the caller named it. */
  kernel?: string;
}

/** Something that looks like a `vscode.Uri`. */
interface UriLike {
  scheme: string;
  query: string;
  toString(): string;
}

function isUriLike(value: unknown): value is UriLike {
  return typeof value === 'object' && value !== null && typeof (value as UriLike).scheme === 'string' && typeof (value as UriLike).toString === 'function';
}

function uriString(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value.trim() || undefined;
  }
  if (isUriLike(value)) {
    const ir = decodeIrUri(value);
    return ir ? ir.source : value.toString();
  }
  if (typeof value === 'object' && value !== null && 'uri' in value) {
    return uriString((value as { uri: unknown }).uri);
  }
  return undefined;
}

function kernelOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim()) {
    return value.trim();
  }
  if (typeof value === 'object' && value !== null && typeof (value as { kernel?: unknown }).kernel === 'string') {
    return (value as { kernel: string }).kernel;
  }
  return undefined;
}

/**
 * Work out which document and kernel a command is for. `args` are what VS Code passed; `active` is the active
 * editor's document URI (used from the palette). An IR view stands for its source and kernel.
 */
export function parseCommandTarget(args: readonly unknown[], active?: UriLike): CommandTarget | undefined {
  const [first, second] = args;
  const uri = uriString(first);
  if (uri) {
    const kernel = kernelOf(second) ?? kernelOf(first) ?? irKernel(first);
    return kernel ? { uri, kernel } : { uri };
  }
  if (!active) {
    return undefined;
  }
  const ir = decodeIrUri(active);
  return ir ? { uri: ir.source, kernel: ir.kernel } : { uri: active.toString() };
}

function irKernel(value: unknown): string | undefined {
  return isUriLike(value) ? decodeIrUri(value)?.kernel : undefined;
}

function contains(range: LspRange, line: number): boolean {
  return line >= range.start.line && line <= range.end.line;
}

/**
 * The kernel at `line` (0-based): the innermost whose range contains it, else the last one defined above it
 * (a server may report only the `def` line as the range).
 */
export function kernelAtLine(kernels: readonly KernelInfo[], line: number): KernelInfo | undefined {
  const hits = kernels.filter((k) => contains(k.range, line));
  hits.sort((a, b) => a.range.end.line - a.range.start.line - (b.range.end.line - b.range.start.line));
  if (hits.length > 0) {
    return hits[0];
  }
  const above = kernels.filter((k) => k.range.start.line <= line);
  return above.sort((a, b) => b.range.start.line - a.range.start.line)[0];
}

/** Kernels ordered for a quick pick: the one under the cursor first, the rest in file order. */
export function orderKernels(kernels: readonly KernelInfo[], cursorLine?: number): KernelInfo[] {
  const here = cursorLine === undefined ? undefined : kernelAtLine(kernels, cursorLine);
  const rest = kernels.filter((k) => k !== here).sort((a, b) => a.range.start.line - b.range.start.line);
  return here ? [here, ...rest] : rest;
}
