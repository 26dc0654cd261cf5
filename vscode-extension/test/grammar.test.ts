import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const injection = JSON.parse(readFileSync(join(root, 'syntaxes', 'tilelsp-directives.injection.json'), 'utf8'));

/** The first injection pattern that matches, with its scopes by capture (the patterns use JS-compatible syntax). */
function scopes(text: string): Record<string, string> | undefined {
  for (const p of injection.patterns as { match: string; captures: Record<string, { name: string }> }[]) {
    const m = new RegExp(p.match).exec(text);
    if (m) {
      return Object.fromEntries(Object.entries(p.captures).map(([i, c]) => [c.name, m[Number(i)]]));
    }
  }
  return undefined;
}

describe('grammars', () => {
  it('are contributed with files that exist and matching scope names', () => {
    for (const g of manifest.contributes.grammars) {
      const file = JSON.parse(readFileSync(join(root, g.path), 'utf8'));
      expect(file.scopeName).toBe(g.scopeName);
    }
    expect(manifest.contributes.grammars.find((g: { injectTo?: string[] }) => g.injectTo)?.injectTo).toEqual(['source.python']);
  });

  it('highlights suppression comments and their codes', () => {
    const s = scopes('# tilelsp: ignore[gemm-shape-mismatch, copy-extent-mismatch]');
    expect(s?.['keyword.other.directive.ignore.tilelsp']).toBe('ignore');
    expect(s?.['constant.other.diagnostic-code.tilelsp']).toBe('gemm-shape-mismatch, copy-extent-mismatch');
  });

  it('highlights file-wide suppressions, instance comments and bare directives; leaves plain comments alone', () => {
    expect(scopes('# tilelsp: ignore-file[smem-overflow]')?.['constant.other.diagnostic-code.tilelsp']).toBe('smem-overflow');
    expect(scopes('# tilelsp: matmul(M=1024, N=1024, K=512)')?.['entity.name.function.instance.tilelsp']).toBe('matmul');
    expect(scopes('x = 1  # tilelsp: ignore')?.['keyword.other.directive.tilelsp']).toBe('ignore');
    expect(scopes('# an ordinary comment about tiles')).toBeUndefined();
  });
});
