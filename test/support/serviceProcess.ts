import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Client } from './client.ts';
import { testEnv } from './testApp.ts';

/** A port nothing listens on right now (the OS picks it; we release it at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  client: Client;
  /** Every line the process wrote to stdout so far (the JSON log). */
  output: string[];
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Whether a process still exists (signal 0 only asks). */
export function isAlive(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch {
    return false;
  }
}

/** Polls `check` every 50 ms until it holds, for at most `ms`. */
export async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

export async function answersHealthz(client: Client): Promise<boolean> {
  const reply = await client.get('/healthz').catch(() => null);
  return reply?.status === 200;
}

/**
 * The service as its own process (`node <script> ...args`), on a free port
 * (or env.PORT) and its own Redis prefix (or env.REDIS_PREFIX): what an
 * operator runs, so a crash is a dead process rather than a failed test
 * worker. Ready when it answers /healthz, or when `ready` holds (a
 * worker-only process has no API).
 */
export async function startServiceProcess(script: string, args: string[], env: Record<string, string> = {}, ready?: () => Promise<boolean>): Promise<ServiceProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...testEnv({ PORT: String(port), ...env }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const output: string[] = [];
  let partial = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    output.push(...lines.filter(Boolean));
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const client = new Client(`http://127.0.0.1:${port}`);
  await until(ready ?? (() => answersHealthz(client)), 30_000, `${script} ${args.join(' ')} to be ready`);
  return {
    child,
    port,
    client,
    output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
