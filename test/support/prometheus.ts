import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../../scripts/chaos/services.ts';
import { until } from './until.ts';

/** An engine (Prometheus, an exporter) as a local process on a port picked for it, answering HTTP. */
export interface HttpEngine {
  port: number;
  /** What the process wrote, for a failure message. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `command` with the args for its port, and waits until `readyPath` answers 200 there (a minute at most). */
export async function startHttpEngine(
  command: string,
  args: (port: number) => string[],
  readyPath: string,
  env: Record<string, string> = {},
): Promise<HttpEngine> {
  const port = await freePort();
  const child: ChildProcess = spawn(command, args(port), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  try {
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}: ${output}`);
        return (await fetch(`http://127.0.0.1:${port}${readyPath}`).catch(() => null))?.status === 200;
      },
      60_000,
      `${command} to answer ${readyPath} on port ${port}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, output: () => output, stop };
}

export interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

/** An instant query against Prometheus's HTTP API. */
export async function instantQuery(prometheus: HttpEngine, expr: string): Promise<QueryAnswer> {
  const reply = await fetch(`http://127.0.0.1:${prometheus.port}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  return (await reply.json()) as QueryAnswer;
}
