import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Client } from './client.ts';
import { testEnv } from './testApp.ts';
import { until } from './until.ts';

export interface ServiceProcess {
  child: ChildProcess;
  /** The port the API listens on, as the process last reported it (a supervised API restarts on a new one). */
  readonly port: number;
  /** A client of that port. */
  readonly client: Client;
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

export async function answersHealthz(client: Client): Promise<boolean> {
  const reply = await client.get('/healthz').catch(() => null);
  return reply?.status === 200;
}

/** The port in a "started" log line (`uri` is null for a process without an API). */
function reportedPort(line: string): number | null {
  if (!line.includes('"started"')) return null;
  try {
    const { msg, uri } = JSON.parse(line) as { msg?: string; uri?: string | null };
    return msg === 'started' && uri ? Number(new URL(uri).port) : null;
  } catch {
    return null;
  }
}

/**
 * The service as its own process (`node <script> ...args`) on its own Redis
 * prefix (or env.REDIS_PREFIX): what an operator runs, so a crash is a dead
 * process rather than a failed test worker. It binds port 0 itself (or
 * env.PORT) and reports the port in its "started" log line, so no other
 * process can take the port between a pick and its use. Ready when it
 * answers /healthz, or when `ready` holds (a worker-only process has no API);
 * a process that exits first fails the start at once.
 */
export async function startServiceProcess(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  ready?: () => Promise<boolean>,
): Promise<ServiceProcess> {
  const level = env.LOG_LEVEL ?? 'info';
  if (!['info', 'debug', 'trace'].includes(level))
    throw new Error(`a service process reports its port at level info: LOG_LEVEL ${level} would hide it`);
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...testEnv({ PORT: '0', ...env, LOG_LEVEL: level }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const output: string[] = [];
  let port: number | null = null;
  let client: Client | null = null;
  let partial = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines.filter(Boolean)) {
      output.push(line);
      const reported = reportedPort(line);
      if (reported !== null && reported !== port) {
        port = reported;
        client = new Client(`http://127.0.0.1:${port}`);
      }
    }
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const what = `${script} ${args.join(' ')}`;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const isReady = ready ?? (async () => client !== null && (await answersHealthz(client)));
  try {
    await until(
      async () => {
        if (gone()) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
        return isReady();
      },
      // Seconds to start, tens of them on a loaded machine; below the 60 s hook timeout, so a start that never
      // becomes ready fails with this message and the process's last lines rather than a bare hook timeout.
      45_000,
      `${what} to be ready`,
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}; its last lines: ${output.slice(-3).join('\n')}`);
  }
  return {
    child,
    get port() {
      if (port === null) throw new Error(`${what} reported no API port`);
      return port;
    },
    get client() {
      if (client === null) throw new Error(`${what} reported no API port`);
      return client;
    },
    output,
    stop: async () => {
      if (!gone()) child.kill('SIGTERM');
      return exited;
    },
  };
}
