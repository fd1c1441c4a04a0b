import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/chaos/services.ts';

const run = promisify(execFile);

/**
 * A process with the role's last line of defence installed lets `rejection`
 * (an expression giving a promise) reject with nobody awaiting it, then says
 * it is still alive once the role's handler has dealt with the rejection.
 */
async function escapeInAProcess(rejection: string): Promise<{ code: number; lines: { msg?: string; origin?: string }[]; output: string }> {
  const script = `
    const { surviveEscapedOutages } = await import('./src/logging/outages.ts');
    const { createLogger } = await import('./src/logging/logger.ts');
    const { Redis } = await import('ioredis');
    surviveEscapedOutages(createLogger({ logLevel: 'info' }));
    // Registered after the role's handler, so it runs once that handler has dealt with the rejection (and never if it exited).
    process.on('unhandledRejection', () => setImmediate(() => { console.log(JSON.stringify({ msg: 'still alive' })); process.exit(0); }));
    const escaped = await (async () => ${rejection})();
    Promise.reject(escaped);
  `;
  const result = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  const lines = result.stdout.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as { msg?: string; origin?: string }];
    } catch {
      return [];
    }
  });
  return { code: result.code, lines, output: result.stdout };
}

describe('a role process whose engine error escapes every handler', () => {
  it('logs a real ioredis connection error nobody awaited and carries on', async () => {
    const port = await freePort();
    // A real rejection from ioredis: a command to a Redis that is not there, without retries.
    const rejection =
      `{ const redis = new Redis(${port}, { maxRetriesPerRequest: 0, retryStrategy: () => null }); ` +
      "redis.on('error', () => {}); return redis.get('x').catch((error) => error); }";
    const { code, lines, output } = await escapeInAProcess(rejection);
    expect(code, output).toBe(0);
    // pino writes its line asynchronously (sonic-boom) and console.log synchronously: either may reach the pipe first.
    expect(lines.map((line) => line.msg).sort()).toEqual(['an engine error escaped its handler; carrying on', 'still alive']);
    expect(lines.find((line) => line.msg !== 'still alive')?.origin).toBe('unhandledRejection');
  });

  it('dies of any other escaped error, with one fatal line, so its supervisor restarts it', async () => {
    const { code, lines, output } = await escapeInAProcess(`new TypeError('a bug')`);
    expect(code, output).toBe(1);
    expect(lines.map((line) => line.msg)).toEqual(['unhandled error; exiting']);
  });
});
