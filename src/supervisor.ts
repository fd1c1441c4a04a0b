import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Logger } from './logging/logger.ts';

/** Exit code of a role that refused its settings: restarting it cannot help. */
export const SETTINGS_EXIT_CODE = 78;

export interface SupervisorOptions {
  /** The entry point each child runs with its role as the only argument. */
  entry: string;
  roles: string[];
  logger: Logger;
  /** First restart delay; it doubles on each crash in a row, up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** A child that stayed up this long starts over from initialDelayMs when it next dies. */
  healthyAfterMs?: number;
}

interface Role {
  name: string;
  child: ChildProcess | null;
  startedAt: number;
  restarts: number;
  delayMs: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Runs each role (api, worker) as a child process and restarts one that
 * dies, with exponential backoff and one structured log line per restart.
 * `stop()` sends SIGTERM to every child, so each drains as it would alone,
 * and resolves once all have exited.
 */
export class Supervisor {
  private readonly options: Required<SupervisorOptions>;
  private readonly roles: Role[];
  private stopping: Promise<void> | null = null;
  private fatal: ((code: number) => void) | null = null;
  /** Resolves with the exit code the supervisor should end with, once every child is gone. */
  readonly done: Promise<number>;

  constructor(options: SupervisorOptions) {
    this.options = { initialDelayMs: 250, maxDelayMs: 30_000, healthyAfterMs: 30_000, ...options };
    this.roles = options.roles.map((name) => ({
      name,
      child: null,
      startedAt: 0,
      restarts: 0,
      delayMs: this.options.initialDelayMs,
      timer: null,
    }));
    this.done = new Promise((resolve) => {
      this.fatal = resolve;
    });
  }

  start(): void {
    for (const role of this.roles) this.spawn(role);
  }

  /** The running child of a role, if any (for operators and tests). */
  pidOf(roleName: string): number | undefined {
    return this.roles.find((role) => role.name === roleName)?.child?.pid;
  }

  private spawn(role: Role): void {
    role.timer = null;
    const child = fork(this.options.entry, [role.name], { stdio: 'inherit' });
    role.child = child;
    role.startedAt = Date.now();
    this.options.logger.info({ role: role.name, rolePid: child.pid, restarts: role.restarts }, 'role started');
    child.once('exit', (code, signal) => this.exited(role, child, code, signal));
  }

  private exited(role: Role, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (role.child === child) role.child = null;
    if (this.stopping) {
      this.options.logger.info({ role: role.name, rolePid: child.pid, code, signal }, 'role exited');
      return;
    }
    if (code === SETTINGS_EXIT_CODE) {
      this.options.logger.fatal({ role: role.name, code }, 'role refused its settings; not restarting');
      void this.stop().then(() => this.fatal?.(SETTINGS_EXIT_CODE));
      return;
    }
    if (Date.now() - role.startedAt >= this.options.healthyAfterMs) role.delayMs = this.options.initialDelayMs;
    role.restarts += 1;
    const delayMs = role.delayMs;
    role.delayMs = Math.min(role.delayMs * 2, this.options.maxDelayMs);
    this.options.logger.warn(
      { role: role.name, rolePid: child.pid, code, signal, restarts: role.restarts, delayMs },
      'role exited; restarting',
    );
    role.timer = setTimeout(() => this.spawn(role), delayMs);
  }

  /** SIGTERM to every child (each drains), no more restarts; resolves when all have exited. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const running: Promise<unknown>[] = [];
      for (const role of this.roles) {
        if (role.timer) clearTimeout(role.timer);
        const child = role.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) continue;
        running.push(once(child, 'exit'));
        child.kill('SIGTERM');
      }
      await Promise.all(running);
      this.fatal?.(0);
    })();
    return this.stopping;
  }
}
