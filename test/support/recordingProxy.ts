import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as it reached the proxy: what a client really put on the wire. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** performance.now() when the request arrived. */
  at: number;
}

/** An answer the proxy gives itself instead of forwarding. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** Headers that describe one hop, not the request or response itself. */
const hopHeaders = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

/**
 * An HTTP proxy in front of the service under test: it records every
 * request, and forwards it unless `answer` returns an answer of its own
 * (a 429 the service would not give at that moment, say). Loopback only.
 */
export class RecordingProxy {
  readonly seen: SeenRequest[] = [];
  private server: Server | null = null;
  private readonly target: string;
  private readonly answer: (request: SeenRequest) => CannedAnswer | null;
  url = '';

  constructor(target: string, answer: (request: SeenRequest) => CannedAnswer | null = () => null) {
    this.target = target;
    this.answer = answer;
  }

  async open(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request: SeenRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, at: performance.now() };
        this.seen.push(request);
        const canned = this.answer(request);
        if (canned) {
          res.writeHead(canned.status, { 'content-type': 'application/json', ...canned.headers });
          res.end(JSON.stringify(canned.body));
          return;
        }
        const headers = Object.entries(req.headers).flatMap(([name, value]) =>
          hopHeaders.has(name) || value === undefined ? [] : [[name, String(value)] as [string, string]],
        );
        const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.concat(chunks);
        fetch(`${this.target}${request.path}`, { method: request.method, headers, body })
          .then(async (response) => {
            const payload = Buffer.from(await response.arrayBuffer());
            const out: Record<string, string> = {};
            response.headers.forEach((value, name) => {
              if (!hopHeaders.has(name)) out[name] = value;
            });
            res.writeHead(response.status, out);
            res.end(payload);
          })
          .catch((error: Error) => {
            res.writeHead(502, { 'content-type': 'text/plain' });
            res.end(`proxy could not reach the service: ${error.message}`);
          });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** The POSTs seen so far. */
  posts(): SeenRequest[] {
    return this.seen.filter((r) => r.method === 'POST');
  }
}
