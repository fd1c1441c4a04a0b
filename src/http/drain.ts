import type { Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';

declare module '@hapi/hapi' {
  interface ServerApplicationState {
    /** Set on SIGTERM: /readyz answers 503 and every response closes its connection. */
    draining?: boolean;
  }
}

/**
 * While draining, each response asks its client to close the connection, so
 * keep-alive clients open their next one elsewhere (a balancer has stopped
 * sending here by then). A request read after hapi ended its socket could
 * never be answered: it is dropped before it can apply anything.
 */
export function registerDrain(server: Server): void {
  server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
    const socket = request.raw.req.socket;
    if (!socket.writableEnded && !socket.destroyed) return h.continue;
    socket.destroy();
    return h.abandon;
  });
  server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
    if (!server.app.draining) return h.continue;
    const response = request.response as ResponseObject | { output: { headers: Record<string, string> } };
    if ('output' in response) response.output.headers.Connection = 'close';
    else response.header('Connection', 'close');
    return h.continue;
  });
}

/**
 * SIGTERM for the HTTP tier: /readyz 503 at once, serving as usual for
 * `graceMs`, then hapi's stop: no new connections, every request already read
 * answered (within `timeoutMs`), idle keep-alive sockets closed, busy ones
 * after their response.
 */
export async function drainAndStop(server: Server, graceMs: number, timeoutMs: number): Promise<void> {
  server.app.draining = true;
  if (graceMs > 0) await new Promise((resolve) => setTimeout(resolve, graceMs));
  await server.stop({ timeout: timeoutMs });
}
