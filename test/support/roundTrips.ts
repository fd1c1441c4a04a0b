import { createRequire } from 'node:module';

type Query = (this: object, ...args: unknown[]) => unknown;

// The driver under MikroORM, loaded the way the service loads it, so its Client is the one every pool connection uses.
const pg = createRequire(import.meta.url)('pg') as { Client: { prototype: { query: Query } } };

/** One round trip: the statements a connection sent before it waited for their answers. */
export type Trip = string[];

/**
 * The round trips of every connection of this process while `run` runs,
 * each connection's in order. A trip starts when a statement is sent on a
 * connection with none of its statements awaiting an answer, and takes in
 * every statement sent before those answers are all in: the count of times
 * the service waited for Postgres, as docs/benchmarks.md counts round trips.
 */
export async function roundTripsDuring(run: () => Promise<unknown>): Promise<Trip[][]> {
  const byConnection = new Map<object, { awaiting: number; trips: Trip[] }>();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: object, ...args: unknown[]) {
    const config = args[0];
    const text = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '');
    let connection = byConnection.get(this);
    if (!connection) byConnection.set(this, (connection = { awaiting: 0, trips: [] }));
    if (connection.awaiting === 0) connection.trips.push([]);
    connection.trips.at(-1)?.push(text);
    const answer = original.apply(this, args);
    if (answer instanceof Promise) {
      const seen = connection;
      seen.awaiting += 1;
      answer.then(
        () => (seen.awaiting -= 1),
        () => (seen.awaiting -= 1),
      );
    }
    return answer;
  };
  try {
    await run();
  } finally {
    pg.Client.prototype.query = original;
  }
  return [...byConnection.values()].map((connection) => connection.trips);
}

/** The trips of the one connection whose statements include `marker`, each trip's statements joined. */
export function tripsOf(connections: Trip[][], marker: string): string[] {
  const matching = connections.filter((trips) => trips.some((trip) => trip.some((text) => text.includes(marker))));
  if (matching.length !== 1) throw new Error(`${matching.length} connections sent a statement with ${marker}`);
  return (matching[0] as Trip[]).map((trip) => trip.join(';\n'));
}
