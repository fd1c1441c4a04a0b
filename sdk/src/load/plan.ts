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

/**
 * Picks operations in proportion to their weights, spread evenly (smooth
 * weighted round-robin, as nginx balances upstreams): every run of `total`
 * picks holds each operation exactly its weight's times, so a short run has
 * the whole mix, and the mix is the same from one run to the next. Drawn at
 * random instead, a 60-arrival run missed an operation of weight 5 in 100
 * one time in twenty.
 */
export function picker(mix: Record<Operation, number>): () => Operation {
  const entries = operations.filter((op) => mix[op] > 0).map((op) => ({ op, weight: mix[op], current: 0 }));
  const total = entries.reduce((sum, entry) => sum + entry.weight, 0);
  return () => {
    let chosen = entries[0]!;
    for (const entry of entries) {
      entry.current += entry.weight;
      if (entry.current > chosen.current) chosen = entry;
    }
    chosen.current -= total;
    return chosen.op;
  };
}
