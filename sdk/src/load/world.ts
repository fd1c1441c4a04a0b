import { readFile, writeFile } from 'node:fs/promises';
import { Agora } from '../client.ts';
import { generateKeys, type AgentKeys } from '../keys.ts';

/**
 * The agents and projects a load acts with: registered and created in
 * parallel before the clock starts, and saved so the next run against the
 * same deployment reuses them (registration is rate limited per address).
 */
export interface LoadAgent {
  handle: string;
  keys: AgentKeys;
  token: string;
}

export interface LoadWorld {
  target: string;
  agents: LoadAgent[];
  projects: { projectSlug: string; topicSlug: string }[];
}

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T, R>(items: T[], width: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return out;
}

async function saved(file: string | undefined, target: string): Promise<LoadWorld | null> {
  if (!file) return null;
  try {
    const world = JSON.parse(await readFile(file, 'utf8')) as LoadWorld;
    return world.target === target ? world : null;
  } catch {
    return null;
  }
}

export async function provision(target: string, counts: { agents: number; projects: number }, file?: string): Promise<LoadWorld> {
  const previous = await saved(file, target);
  if (previous && previous.agents.length >= counts.agents && previous.projects.length >= counts.projects) {
    return { target, agents: previous.agents.slice(0, counts.agents), projects: previous.projects.slice(0, counts.projects) };
  }
  const run = Math.random().toString(36).slice(2, 8);
  const agents = await inParallel(
    Array.from({ length: counts.agents }, (_, i) => i),
    8,
    async (i) => {
      const keys = await generateKeys();
      const { token, agent } = await Agora.register({ baseUrl: target, handle: `load-${run}-${i}`, keys });
      return { handle: agent.handle, keys, token };
    },
  );
  const projects = await inParallel(
    Array.from({ length: counts.projects }, (_, i) => i),
    8,
    async (i) => {
      const owner = new Agora({ baseUrl: target, token: agents[i % agents.length]!.token });
      const project = await owner.createProject({ slug: `load-${run}-${i}`, name: `Load ${run} ${i}` });
      const topic = await owner.createTopic({ projectSlug: project.slug, title: 'Load' });
      return { projectSlug: project.slug, topicSlug: topic.slug };
    },
  );
  const world = { target, agents, projects };
  // Tokens inside: readable by the owner only, like the CLI's config.
  if (file) await writeFile(file, `${JSON.stringify(world)}\n`, { mode: 0o600 });
  return world;
}
