/** Encoding of read-only IR views as `tilelang-ir:` URIs: a readable path for the tab title, the request in the query. */

import { IR_SCHEME } from './constants';

export interface IrRequest {
  /** The source document's URI, as a string. */
  source: string;
  kernel: string;
  stage: string;
  target?: string;
  instance?: string;
}

export interface IrUriParts {
  scheme: string;
  path: string;
  query: string;
}

const EXTENSIONS: Record<string, string> = { cuda: '.cu', llvm: '.ll' };

/** File extension for a stage's view: it picks the editor language before the text arrives. */
export function stageExtension(stage: string): string {
  return EXTENSIONS[stage] ?? '.tileir';
}

function baseName(source: string): string {
  const noQuery = source.split(/[?#]/)[0];
  const last = noQuery.split('/').filter(Boolean).pop() ?? 'kernel';
  let name: string;
  try {
    name = decodeURIComponent(last);
  } catch {
    name = last;
  }
  return name.replace(/\.py$/, '');
}

function safeSegment(text: string): string {
  return text.replace(/[\\/?#%:]/g, '_') || '_';
}

/** Build the URI components of an IR view: path `/<file>/<kernel>[@instance]/<stage>[-target].<ext>`. */
export function encodeIrUri(req: IrRequest): IrUriParts {
  const kernel = safeSegment(req.instance ? `${req.kernel}@${req.instance}` : req.kernel);
  const stage = safeSegment(req.target ? `${req.stage}-${req.target}` : req.stage);
  const query = new URLSearchParams({ source: req.source, kernel: req.kernel, stage: req.stage });
  if (req.target) {
    query.set('target', req.target);
  }
  if (req.instance) {
    query.set('instance', req.instance);
  }
  return {
    scheme: IR_SCHEME,
    path: `/${safeSegment(baseName(req.source))}/${kernel}/${stage}${stageExtension(req.stage)}`,
    query: query.toString(),
  };
}

/** Read the request back from an IR URI's query; undefined when it is not one of ours. */
export function decodeIrUri(uri: { scheme: string; query: string }): IrRequest | undefined {
  if (uri.scheme !== IR_SCHEME) {
    return undefined;
  }
  const q = new URLSearchParams(uri.query);
  const source = q.get('source');
  const kernel = q.get('kernel');
  const stage = q.get('stage');
  if (!source || !kernel || !stage) {
    return undefined;
  }
  const req: IrRequest = { source, kernel, stage };
  const target = q.get('target');
  const instance = q.get('instance');
  if (target) {
    req.target = target;
  }
  if (instance) {
    req.instance = instance;
  }
  return req;
}

/** The VS Code language for the `languageId` the server reports. */
export function editorLanguage(languageId: string | undefined, stage: string): string {
  switch (languageId) {
    case 'cuda':
      return 'cuda-cpp';
    case 'llvm':
      return 'llvm';
    case 'python':
    case 'tvmscript':
      return 'tilelang-ir';
    default:
      return stage === 'cuda' ? 'cuda-cpp' : 'tilelang-ir';
  }
}
