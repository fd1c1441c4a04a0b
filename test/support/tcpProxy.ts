import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP forwarder between the service and Postgres or Redis: closing it is
 * an outage as the service sees one (connections reset, new ones refused),
 * reopening it on the same port is the recovery. Loopback only.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly target: { host: string; port: number };
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.target = target;
  }

  async open(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Resets every open connection and refuses new ones. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The same URL with host and port replaced by this proxy's. */
  url(original: string): string {
    const url = new URL(original);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }
}

export function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}
