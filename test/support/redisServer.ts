import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';

/** A free loopback port (the OS picks one, we release it and hand it on). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A redis-server of its own on a free loopback port, for tests that must configure or stop Redis. */
export class RedisServer {
  private child: ChildProcess | null = null;
  readonly port: number;
  private readonly args: string[];

  private constructor(port: number, args: string[]) {
    this.port = port;
    this.args = args;
  }

  static async start(args: string[] = []): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), args);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.args], { stdio: 'ignore' });
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    for (let i = 0; i < 100; i++) {
      if (await probe.connect().then(() => true, () => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    probe.disconnect();
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
}
