/** Answers the server's workspace/configuration pulls for `tilelsp` with validated settings. */

import { readSettings, serverConfig, type ConfigReader } from './settings';
import { SECTION } from './constants';

export interface ConfigurationItem {
  scopeUri?: string;
  section?: string;
}

/**
 * Replace the answers for the `tilelsp` section (or one of its keys) with validated values; `trustWorkspace`
 * stays false while VS Code's workspace trust is not granted. Other sections keep VS Code's own answer.
 */
export function answerConfiguration(
  items: readonly ConfigurationItem[],
  raw: readonly unknown[],
  read: (scopeUri?: string) => ConfigReader,
  workspaceTrusted: boolean,
): unknown[] {
  return items.map((item, i) => {
    const section = item.section ?? '';
    if (section !== SECTION && !section.startsWith(`${SECTION}.`)) {
      return raw[i] ?? null;
    }
    const config = serverConfig(readSettings(read(item.scopeUri)), workspaceTrusted) as unknown as Record<string, unknown>;
    if (section === SECTION) {
      return config;
    }
    let value: unknown = config; // a dotted key such as `ray.address` walks the nested answer
    for (const part of section.slice(SECTION.length + 1).split('.')) {
      value = value !== null && typeof value === 'object' && part in value ? (value as Record<string, unknown>)[part] : undefined;
    }
    return value !== undefined ? value : (raw[i] ?? null);
  });
}
