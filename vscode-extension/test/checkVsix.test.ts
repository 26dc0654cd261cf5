import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript module without types
import { checkVsix, readZip } from '../scripts/check-vsix.mjs';

const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
const bundle = 'exports.activate = function () {}; exports.deactivate = function () {}; require("vscode"); require("node:path");';

function entries(overrides: Record<string, string | undefined> = {}): Map<string, Buffer> {
  const files: Record<string, string | undefined> = {
    'extension.vsixmanifest': '<PackageManifest/>',
    'extension/package.json': JSON.stringify(manifest),
    'extension/dist/extension.js': bundle,
    'extension/syntaxes/tilelang-ir.tmLanguage.json': '{}',
    'extension/syntaxes/tilelsp-directives.injection.json': '{}',
    'extension/language-configuration.json': '{}',
    ...overrides,
  };
  return new Map(Object.entries(files).filter(([, v]) => v !== undefined).map(([k, v]) => [k, Buffer.from(v as string)]));
}

/** A minimal zip writer (deflate) for the reader test. */
function zip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const packed = deflateRawSync(data);
    const nameBuf = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, packed);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

describe('check-vsix', () => {
  it('accepts a well-formed package built from our manifest', () => {
    expect(checkVsix(entries(), 1000)).toEqual([]);
  });

  it('reports shipped node_modules, sources and a missing bundle', () => {
    const problems = checkVsix(entries({ 'extension/node_modules/x/index.js': '', 'extension/src/extension.ts': '', 'extension/dist/extension.js': undefined }), 1000);
    expect(problems).toContain('node_modules is shipped');
    expect(problems).toContain('TypeScript sources or tests are shipped');
    expect(problems).toContain('extension/dist/extension.js is missing or empty');
  });

  it('reports a manifest without activation, commands or settings', () => {
    const bad = { ...manifest, activationEvents: [], contributes: { ...manifest.contributes, commands: [], configuration: { properties: {} } } };
    const problems: string[] = checkVsix(entries({ 'extension/package.json': JSON.stringify(bad) }), 1000);
    expect(problems).toContain('activationEvents lacks onLanguage:python');
    expect(problems).toContain('contributes.commands lacks tilelsp.showCuda');
    expect(problems).toContain('contributes.configuration lacks tilelsp.trustWorkspace');
  });

  it('reports grammars and language configurations that are not shipped', () => {
    const problems: string[] = checkVsix(entries({ 'extension/language-configuration.json': undefined, 'extension/syntaxes/tilelang-ir.tmLanguage.json': undefined }), 1000);
    expect(problems).toContain('language configuration ./language-configuration.json is not shipped');
    expect(problems).toContain('grammar ./syntaxes/tilelang-ir.tmLanguage.json is not shipped');
  });

  it('rejects a bundle that needs an unshipped package', () => {
    const problems: string[] = checkVsix(entries({ 'extension/dist/extension.js': 'require("vscode-languageclient/node"); exports.activate = () => 0;' }), 1000);
    expect(problems.join('\n')).toMatch(/requires "vscode-languageclient\/node"/);
  });

  it('reads deflated zip entries', () => {
    const files = readZip(zip({ 'a.txt': 'hello hello hello', 'dir/b.json': '{"x":1}' }));
    expect([...files.keys()]).toEqual(['a.txt', 'dir/b.json']);
    expect(files.get('a.txt').toString()).toBe('hello hello hello');
  });
});
