/** Identifiers shared by the extension's modules: command ids, settings section, URI scheme, request names. */

export const SECTION = 'tilelsp';
export const CLIENT_ID = 'tilelsp';
export const CLIENT_NAME = 'TileLang Language Server';
export const IR_SCHEME = 'tilelang-ir';

export const Commands = {
  showIR: 'tilelsp.showIR',
  showCuda: 'tilelsp.showCuda',
  showLayout: 'tilelsp.showLayout',
  verify: 'tilelsp.verify',
  benchmark: 'tilelsp.benchmark',
  restartServer: 'tilelsp.restartServer',
  showOutput: 'tilelsp.showOutput',
  statusMenu: 'tilelsp.statusMenu',
  selectTargets: 'tilelsp.selectTargets',
} as const;

/** Commands the server executes through workspace/executeCommand. */
export const ServerCommands = {
  verify: 'tilelsp.server.verify',
  benchmark: 'tilelsp.server.benchmark',
  showIR: 'tilelsp.server.showIR',
} as const;

/** Custom requests of the tilelsp server. */
export const Requests = {
  kernels: 'tilelsp/kernels',
  showIR: 'tilelsp/showIR',
  layout: 'tilelsp/layout',
} as const;

/** Stage names for a CUDA target when the server does not list them (see `passes.pipeline.stage_names`). */
export const DEFAULT_CUDA_STAGES = ['parsed', 'legalized', 'pipelined', 'layouts', 'lowered', 'tir', 'cuda'];
export const DEFAULT_CPU_STAGES = ['parsed', 'legalized', 'tir', 'llvm'];

/** Targets offered by Select Targets (the archs the checks know limits for, and the CPU backend). */
export const KNOWN_TARGETS = ['sm_90a', 'sm_90', 'sm_89', 'sm_86', 'sm_80', 'sm_75', 'cpu'];  // tilelang_core/target.py's ARCHS
