import { STATUS_CODES, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorStatus, type ErrorCode } from '../errors.ts';
import { envelope } from './envelope.ts';

interface ParserError extends Error {
  code?: string;
  /** The bytes Node's parser was reading when it gave up (it sets this on every parser error). */
  rawPacket?: Buffer;
}

interface Refusal {
  code: ErrorCode;
  message: string;
}

const TOO_LARGE: Refusal = { code: 'invalid_request', message: 'the request line or headers are too large' };
const TIMED_OUT: Refusal = { code: 'request_timeout', message: 'the request did not arrive in time' };
const MALFORMED: Refusal = { code: 'invalid_request', message: 'the request is not well-formed HTTP/1.1' };
const EXPECTATION: Refusal = { code: 'expectation_failed', message: 'the only expectation this service meets is 100-continue' };

function refusalFor(error: ParserError): Refusal {
  if (error.code === 'HPE_HEADER_OVERFLOW') return TOO_LARGE;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return TIMED_OUT;
  return MALFORMED;
}

/** The first request line in what the parser read: its method and the path it named ('' when unreadable). */
function requestLineOf(raw: Buffer | undefined): { method: string; path: string } {
  const line = raw?.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0] ?? '';
  const method = /^([!-~]+) /.exec(line)?.[1] ?? '';
  const target = / (\S+)/.exec(line)?.[1] ?? '';
  const path = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?/i.exec(target)?.[1] ?? target;
  return { method, path: path.split(/[?#]/, 1)[0] ?? '' };
}

function bodyOf(path: string, refusal: Refusal): string {
  return JSON.stringify(envelope(path, false, { error: { code: refusal.code, message: refusal.message } }));
}

/** A whole response for the socket, versioned by the path the request named; HEAD gets the headers alone. */
function rawAnswer(raw: Buffer | undefined, refusal: Refusal): string {
  const { method, path } = requestLineOf(raw);
  const body = bodyOf(path, refusal);
  const status = errorStatus[refusal.code];
  const head =
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ` +
    `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  return method === 'HEAD' ? head : head + body;
}

interface SocketWithResponse extends Duplex {
  /** Node's own link from a socket to the response being written on it, if any. */
  _httpMessage?: ServerResponse | null;
}

/**
 * Requests Node's HTTP parser refuses never reach hapi, and Node (or hapi)
 * answers them with a bare status line. Here they get the contract's error
 * body, versioned by the path they named: an unknown method, a malformed
 * header, a duplicate or negative Content-Length, a bad chunk, oversized
 * headers, a request that timed out, and an `Expect` other than
 * 100-continue. A parse error in the body of a request hapi is already
 * handling goes back to hapi, which answers through the error mapper.
 */
export function answerParserRefusalsWithErrorBody(listener: HttpServer): void {
  const [hapiHandler] = listener.listeners('clientError') as ((error: ParserError, socket: Duplex) => void)[];
  listener.removeAllListeners('clientError');
  listener.on('clientError', (error: ParserError, socket: SocketWithResponse) => {
    const answer = () => (socket.writable ? socket.end(rawAnswer(error.rawPacket, refusalFor(error))) : socket.destroy());
    // A client that hung up mid-request (reset, or half-closed before the request was whole) gets a clean close.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) return socket.destroy();
    const inFlight = socket._httpMessage;
    if (!inFlight) return answer();
    // The bytes broke inside the body of the request being answered: hapi replies through the error mapper.
    if (!inFlight.req.complete && !inFlight.headersSent && hapiHandler) return hapiHandler(error, socket);
    // They broke after it (a pipelined request): the answer in progress goes out first, then this one.
    let once = false;
    const afterCurrent = () => {
      if (once) return;
      once = true;
      answer();
    };
    inFlight.once('finish', afterCurrent);
    inFlight.once('close', afterCurrent);
  });
  // With a listener here Node no longer answers 417 itself.
  listener.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '').split(/[?#]/, 1)[0] ?? '';
    const body = bodyOf(path, EXPECTATION);
    response.shouldKeepAlive = false;
    response.writeHead(errorStatus[EXPECTATION.code], {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    response.end(body);
  });
}
