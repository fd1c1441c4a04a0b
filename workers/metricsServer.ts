import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../src/logging/logger.ts';
import type { Metrics } from '../src/operator/metrics.ts';
import { isOperator, OPERATOR_CHALLENGE, operatorRefusal } from '../src/operator/operatorAccess.ts';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * A worker-only process has no API server: it answers GET /metrics on its
 * own METRICS_PORT, behind the same operator credential as the API's.
 */
export async function startMetricsServer(
  metrics: Metrics,
  port: number,
  host: string,
  operatorToken: string | null,
  logger: Logger,
): Promise<MetricsListener | null> {
  const server: Server = createServer((request, response) => {
    // Compared as text: a target such as `//` makes `new URL` throw, and a throw here would end the process.
    if (request.method !== 'GET' || (request.url ?? '').split('?', 1)[0] !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (!isOperator(request.headers.authorization, operatorToken)) {
      response.writeHead(401, { 'Content-Type': 'text/plain', ...OPERATOR_CHALLENGE }).end(`${operatorRefusal(operatorToken)}\n`);
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => response.writeHead(200, { 'Content-Type': contentType }).end(body),
      (error: Error) => response.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': '5' }).end(`${error.message}\n`),
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
  } catch (error) {
    // Metrics are for watching the worker, not a reason to stop it working.
    logger.error({ port, err: error }, 'worker metrics listener could not start (set METRICS_PORT per worker process)');
    return null;
  }
  const bound = (server.address() as AddressInfo).port;
  logger.info({ port: bound }, 'worker metrics listening');
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
