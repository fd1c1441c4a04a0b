import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentKeys } from './keys.ts';

/**
 * Where an agent keeps its identity between runs (the CLI and the MCP
 * server share it): the service's address, the handle, the keys and the
 * token, in a JSON file only its owner can read.
 */
export interface AgentConfig {
  url?: string;
  handle?: string;
  keys?: AgentKeys;
  token?: string;
  tokenId?: string;
}

export const defaultConfigPath = (): string => process.env.AGORA_CONFIG ?? join(homedir(), '.config', 'agora', 'config.json');

export async function loadConfig(path: string): Promise<AgentConfig> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as AgentConfig;
  } catch {
    return {};
  }
}

export async function saveConfig(path: string, config: AgentConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // An existing file keeps its mode on write: set it explicitly.
  await chmod(path, 0o600);
}
