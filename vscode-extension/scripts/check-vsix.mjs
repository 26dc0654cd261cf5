#!/usr/bin/env node
// Checks a packaged .vsix (a zip): manifest, activation events, contributions, the bundle, and that
// node_modules and sources are not shipped. Usage: node scripts/check-vsix.mjs [tilelsp.vsix]
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

export const REQUIRED_COMMANDS = [
  'tilelsp.showIR',
  'tilelsp.showCuda',
  'tilelsp.showLayout',
  'tilelsp.verify',
  'tilelsp.benchmark',
  'tilelsp.restartServer',
];

export const REQUIRED_SETTINGS = [
  'tilelsp.interpreter',
  'tilelsp.targets',
  'tilelsp.checkOnChange',
  'tilelsp.debounceMs',
  'tilelsp.lowerOnSave',
  'tilelsp.verifyDevice',
  'tilelsp.trustWorkspace',
  'tilelsp.workerTimeoutSec',
  'tilelsp.trace.server',
];

const MAX_VSIX_BYTES = 2 * 1024 * 1024;

/** Read every entry of a zip held in memory: Map<name, Buffer>. */
export function readZip(buf) {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) {
    throw new Error('not a zip file (no end-of-central-directory record)');
  }
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) {
      throw new Error(`bad central directory entry ${i}`);
    }
    const method = buf.readUInt16LE(at + 10);
    const compressedSize = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataAt, dataAt + compressedSize);
    const data = method === 0 ? Buffer.from(raw) : method === 8 ? inflateRawSync(raw) : null;
    if (!data || data.length !== size) {
      throw new Error(`cannot read ${name} (method ${method})`);
    }
    entries.set(name, data);
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Load the bundle with a stub `vscode` module and return its exports (proves it is self-contained). */
export function loadBundle(code) {
  const dir = mkdtempSync(join(tmpdir(), 'tilelsp-vsix-'));
  try {
    const file = join(dir, 'extension.js');
    writeFileSync(file, code);
    const require = createRequire(file);
    const Module = require('node:module');
    const original = Module._load;
    const stub = new Proxy(function () {}, { get: () => stub, apply: () => stub, construct: () => stub });
    Module._load = function (request, ...rest) {
      if (request === 'vscode') {
        return stub;
      }
      if (request !== file && !request.startsWith('node:') && !Module.isBuiltin(request)) {
        throw new Error(`the bundle requires "${request}", which is not shipped`);
      }
      return original.call(this, request, ...rest);
    };
    try {
      return require(file);
    } finally {
      Module._load = original;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** All problems found in the vsix entries (empty when it is good). */
export function checkVsix(entries, byteLength = 0) {
  const problems = [];
  const names = [...entries.keys()];
  const need = (cond, message) => cond || problems.push(message);
  need(byteLength <= MAX_VSIX_BYTES, `vsix is ${byteLength} bytes (limit ${MAX_VSIX_BYTES})`);
  need(entries.has('extension.vsixmanifest'), 'extension.vsixmanifest is missing');
  need(!names.some((n) => n.includes('node_modules/')), 'node_modules is shipped');
  need(!names.some((n) => /\.ts$/.test(n) || n.startsWith('extension/src/') || n.startsWith('extension/test/')), 'TypeScript sources or tests are shipped');
  if (!entries.has('extension/package.json')) {
    problems.push('extension/package.json is missing');
    return problems;
  }
  const pkg = JSON.parse(entries.get('extension/package.json').toString('utf8'));
  need(pkg.name === 'tilelsp', `name is ${JSON.stringify(pkg.name)}, expected "tilelsp"`);
  need(typeof pkg.engines?.vscode === 'string' && /^\^?1\.\d+/.test(pkg.engines.vscode), 'engines.vscode is missing');
  need(!pkg.extensionDependencies?.includes('ms-python.python'), 'ms-python.python must stay optional (no extensionDependencies)');
  const main = (pkg.main ?? '').replace(/^\.\//, '');
  need(main === 'dist/extension.js', `main is ${JSON.stringify(pkg.main)}, expected ./dist/extension.js`);
  need((pkg.activationEvents ?? []).includes('onLanguage:python'), 'activationEvents lacks onLanguage:python');
  const commands = (pkg.contributes?.commands ?? []).map((c) => c.command);
  for (const id of REQUIRED_COMMANDS) {
    need(commands.includes(id), `contributes.commands lacks ${id}`);
  }
  for (const item of pkg.contributes?.menus?.commandPalette ?? []) {
    need(commands.includes(item.command), `menu entry for unknown command ${item.command}`);
  }
  const settings = Object.keys(pkg.contributes?.configuration?.properties ?? {});
  for (const key of REQUIRED_SETTINGS) {
    need(settings.includes(key), `contributes.configuration lacks ${key}`);
  }
  for (const grammar of pkg.contributes?.grammars ?? []) {
    need(entries.has(`extension/${grammar.path.replace(/^\.\//, '')}`), `grammar ${grammar.path} is not shipped`);
  }
  for (const language of pkg.contributes?.languages ?? []) {
    const file = language.configuration?.replace(/^\.\//, '');
    need(!file || entries.has(`extension/${file}`), `language configuration ${language.configuration} is not shipped`);
  }
  const bundle = entries.get(`extension/${main}`);
  if (!bundle || bundle.length === 0) {
    problems.push(`extension/${main} is missing or empty`);
    return problems;
  }
  try {
    const exports = loadBundle(bundle);
    need(typeof exports.activate === 'function', 'the bundle does not export activate()');
    need(typeof exports.deactivate === 'function', 'the bundle does not export deactivate()');
  } catch (err) {
    problems.push(`the bundle does not load: ${err.message}`);
  }
  return problems;
}

function main() {
  const path = resolve(process.argv[2] ?? 'tilelsp.vsix');
  const buf = readFileSync(path);
  const entries = readZip(buf);
  const problems = checkVsix(entries, buf.length);
  if (problems.length > 0) {
    for (const p of problems) {
      console.error(`check-vsix: ${p}`);
    }
    process.exit(1);
  }
  console.log(`check-vsix: ${path} ok (${entries.size} files, ${buf.length} bytes)`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main();
}
