import { connect } from 'node:net';

export interface RawExchange {
  /** Everything the server sent back. */
  received: Buffer;
  /** How the connection ended: the server closed it (fin), reset it, or our own timer ended it. */
  ending: 'fin' | 'reset' | 'timeout';
}

/**
 * Sends exactly `request` over a plain socket, half-closes it, and collects
 * the answer until the server closes the connection (or `timeoutMs`).
 */
export function sendRaw(port: number, request: Buffer | string, timeoutMs = 3000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ port, host: '127.0.0.1' });
    let settled = false;
    const finish = (ending: RawExchange['ending']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(chunks), ending });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('connect', () => socket.end(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish('fin'));
    socket.on('close', () => finish('fin'));
    socket.on('error', () => finish('reset'));
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function dechunk(bytes: Buffer, from: number): { body: Buffer; end: number } {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) throw new Error('truncated chunked body');
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size in a response');
    at = lineEnd + 2;
    if (size === 0) return { body: Buffer.concat(parts), end: bytes.indexOf('\r\n', at) + 2 };
    parts.push(bytes.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * Splits what a server sent into HTTP/1.1 responses; throws on anything that
 * is not one. `bodiless`: the request was HEAD, so its answer has no body
 * whatever its Content-Length says.
 */
export function parseResponses(bytes: Buffer, bodiless = false): RawResponse[] {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0) throw new Error(`not an HTTP response: ${JSON.stringify(bytes.subarray(at, at + 80).toString('latin1'))}`);
    const [statusLine = '', ...headerLines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine);
    if (!match) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(match[1]);
    let body: Buffer;
    let end: number;
    if (bodiless || status < 200 || status === 204 || status === 304) {
      body = Buffer.alloc(0);
      end = headEnd + 4;
    } else if (headers['transfer-encoding']?.includes('chunked')) {
      ({ body, end } = dechunk(bytes, headEnd + 4));
    } else {
      const length = Number(headers['content-length'] ?? bytes.length - headEnd - 4);
      body = bytes.subarray(headEnd + 4, headEnd + 4 + length);
      if (body.length !== length) throw new Error('truncated response body');
      end = headEnd + 4 + length;
    }
    responses.push({ status, headers, body });
    at = end;
  }
  return responses;
}

/**
 * Why a response breaks the contract for clients that send junk (null when it
 * keeps it): never a 5xx, and every refusal carries the error body (but an
 * answer to HEAD, which has none).
 */
export function contractViolation(response: RawResponse, bodiless = false): string | null {
  if (response.status >= 500) return `answered ${response.status}`;
  if (response.status < 400 || bodiless) return null;
  let body: { apiVersion?: unknown; ok?: unknown; error?: { code?: unknown; message?: unknown } };
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return `${response.status} without a JSON body: ${JSON.stringify(response.body.toString('latin1').slice(0, 80))}`;
  }
  const versioned = body.apiVersion === '2026-09-11' || body.apiVersion === '2026-09-09';
  if (!versioned || body.ok !== false || typeof body.error?.code !== 'string' || typeof body.error?.message !== 'string') {
    return `${response.status} without the contract's error body: ${JSON.stringify(body).slice(0, 120)}`;
  }
  return null;
}
