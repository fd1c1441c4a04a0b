import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';

/** One role of the service as its own process, restartable, with its output kept for inspection. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private readonly log: WriteStream;
  output = '';
  /** Set once the process logged that it started (LOG_LEVEL info or lower). */
  started = false;
  /** How many "Unhandled error event" lines it wrote (counted even when its output is not kept). */
  unhandledErrors = 0;
  /** Exits nobody asked for (not through kill, killNow or stop): a crash the suite did not cause. */
  unexpectedExits = 0;
  /** Whether to keep everything it writes in `output` (not for a long-lived topology). */
  private readonly keepOutput: boolean;
  readonly role: 'api' | 'worker';
  private readonly env: Record<string, string>;
  /** Set once the suite is taking it down for good. */
  private stopping = false;

  constructor(role: 'api' | 'worker', env: Record<string, string>, logFile: string, keepOutput = true) {
    this.role = role;
    this.keepOutput = keepOutput;
    this.env = env;
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    this.started = false;
    const child = spawn(process.execPath, ['--import', './scripts/require-node-24.mjs', 'src/bin/main.ts', this.role], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (this.keepOutput) this.output += text;
      if (text.includes('"msg":"started"')) this.started = true;
      this.unhandledErrors += text.match(/Unhandled error event/g)?.length ?? 0;
      this.log.write(chunk);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', () => {
      if (this.child === child && !this.stopping) this.unexpectedExits++;
    });
    this.child = child;
  }

  /** SIGSTOP for `ms`, then SIGCONT: a long GC pause or a paused VM. */
  async freeze(ms: number): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    process.kill(pid, 'SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, ms));
    process.kill(pid, 'SIGCONT');
  }

  /** SIGKILL: no drain, no goodbye, as a crash or an OOM kill. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  killNow(): void {
    this.stopping = true;
    this.child?.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    const exited = once(child, 'exit');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    this.log.end();
  }
}
