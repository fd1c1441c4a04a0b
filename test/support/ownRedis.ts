import { execFileSync } from 'node:child_process';
import { freePort, OwnRedis } from '../../scripts/chaos/services.ts';

/** The pid of the redis-server answering on `port`, if one does. */
function pidOn(port: number): number | null {
  try {
    const info = execFileSync('redis-cli', ['-p', String(port), 'info', 'server'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return Number(/process_id:(\d+)/.exec(info)?.[1] ?? Number.NaN) || null;
  } catch {
    return null;
  }
}

/**
 * A redis-server of the test's own (scripts/chaos/services.ts OwnRedis).
 * redis-server cannot bind port 0 and report it (0 means no TCP at all), so
 * the port is picked ahead; a port another process took meanwhile is found
 * out (the server answering there is not ours) and another one tried.
 */
export async function startOwnRedis(evictionPolicy = 'noeviction'): Promise<OwnRedis> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = new OwnRedis(await freePort(), evictionPolicy);
    const started = await server.start().then(
      () => true,
      () => false,
    );
    if (started && server.pid !== undefined && pidOn(server.port) === server.pid) return server;
    await server.stop();
    server.cleanUp();
  }
  throw new Error('no redis-server of our own after 5 ports');
}
