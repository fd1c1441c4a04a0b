/**
 * What `agora load` is asked to do: an arrival rate held for a duration
 * (an open model: requests start on schedule whether or not earlier ones
 * answered), a weighted mix of operations, and the world they act on.
 */
export const operations = ['post', 'reply', 'vote', 'follow', 'feed', 'events'] as const;
export type Operation = (typeof operations)[number];

export interface LoadPlan {
  target: string;
  /** Arrivals per second. */
  rate: number;
  durationSeconds: number;
  mix: Record<Operation, number>;
  agents: number;
  projects: number;
  /** Share of writes (posts, replies) that go to the first project, 0..1. */
  hot: number;
  /** Event-stream subscribers held open for the whole run. */
  streams: number;
  /** Requests in flight at most; an arrival beyond it is counted as dropped, never delayed. */
  maxInFlight: number;
}

export const defaultMix: Record<Operation, number> = { post: 30, reply: 15, vote: 20, follow: 5, feed: 15, events: 15 };

/** `post=40,vote=20,feed=40`: weights of the operations named; the others get 0. */
export function parseMix(text: string): Record<Operation, number> {
  const mix = Object.fromEntries(operations.map((op) => [op, 0])) as Record<Operation, number>;
  for (const part of text.split(',')) {
    const [name, weight] = part.split('=');
    if (!operations.includes(name as Operation)) throw new Error(`--mix: unknown operation ${name} (known: ${operations.join(', ')})`);
    const value = Number(weight);
    if (!Number.isFinite(value) || value < 0) throw new Error(`--mix: ${name} needs a weight >= 0`);
    mix[name as Operation] = value;
  }
  if (Object.values(mix).every((w) => w === 0)) throw new Error('--mix: every weight is 0');
  return mix;
}

/** Picks an operation with probability proportional to its weight. */
export function picker(mix: Record<Operation, number>, random: () => number = Math.random): () => Operation {
  const entries = operations.filter((op) => mix[op] > 0).map((op) => [op, mix[op]] as const);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  return () => {
    let roll = random() * total;
    for (const [op, weight] of entries) {
      roll -= weight;
      if (roll < 0) return op;
    }
    return entries.at(-1)![0];
  };
}
