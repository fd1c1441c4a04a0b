import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.ts';

const CRLF = Buffer.from('\r\n', 'latin1');

/**
 * One Server-Sent Events message (or comment), encoded once and written as
 * the same bytes to every stream that sends it; framed as an HTTP/1.1 chunk
 * once too, the first time a chunked stream needs it.
 */
export class SseMessage {
  readonly bytes: Buffer;
  private chunk: Buffer | null = null;

  constructor(text: string) {
    this.bytes = Buffer.from(text, 'utf8');
  }

  /** An event; `data` is one line (JSON has no raw newlines). */
  static event(id: string, event: string, data: string): SseMessage {
    return new SseMessage(`id: ${id}\nevent: ${event}\ndata: ${data}\n\n`);
  }

  /** The bytes as one chunk of a chunked response: size in hex, CRLF, the bytes, CRLF. */
  framed(): Buffer {
    return (this.chunk ??= Buffer.concat([Buffer.from(`${this.bytes.length.toString(16)}\r\n`, 'latin1'), this.bytes, CRLF]));
  }
}

const KEEP_ALIVE = [new SseMessage(': keep-alive\n\n')];

/** Why a stream ended: its client left, it fell behind its buffer, or the process is draining. */
export type CloseReason = 'client' | 'slow' | 'shutdown';

/**
 * One event stream. Once its headers are out, messages go to the socket
 * as they are (framed as chunks when the response is chunked): the response
 * would encode and frame each write again for every stream. A delivery's
 * messages leave in one write. Live writes never wait: what the client has
 * not taken yet stays buffered, and once that holds more than `bufferBytes`
 * when the next events arrive the connection is cut (the client resumes
 * from the last id it received) rather than buffering without bound.
 */
export class SseConnection {
  private readonly response: ServerResponse;
  private readonly bufferBytes: number;
  private readonly onClose: (reason: CloseReason) => void;
  /** A paced writer waiting for 'drain', released when the stream closes instead. */
  private readonly waiting = new Set<() => void>();
  private socket: Socket | null = null;
  private chunked = false;
  closed = false;

  constructor(response: ServerResponse, bufferBytes: number, onClose: (reason: CloseReason) => void) {
    this.response = response;
    this.bufferBytes = bufferBytes;
    this.onClose = onClose;
    response.once('close', () => this.finish('client'));
  }

  /** Sends the status and headers at once: the client knows the stream is open before the first event. */
  open(headers: Record<string, string>): void {
    this.response.writeHead(200, headers);
    this.response.flushHeaders();
    this.socket = this.response.socket;
    this.chunked = this.response.chunkedEncoding;
  }

  /** What the client has not taken yet, in bytes (the response's and its socket's buffers). */
  get buffered(): number {
    return this.response.writableLength;
  }

  /**
   * Called before writing a delivery: true (and the stream is cut) when more
   * than `bufferBytes` of earlier deliveries still wait for the client. One
   * delivery (at most a ledger read's batch) is always written whole, so a
   * client that keeps up is never cut by a burst.
   */
  fellBehind(): boolean {
    if (this.closed || this.buffered <= this.bufferBytes) return this.closed;
    this.cut();
    return true;
  }

  /** Writes without waiting, in one write to the socket; false once the stream is closed. */
  write(messages: readonly SseMessage[]): boolean {
    const socket = this.socket;
    if (this.closed || !socket) return false;
    if (messages.length === 1) this.put(socket, messages[0]!);
    else if (messages.length > 1) {
      socket.cork();
      for (const message of messages) this.put(socket, message);
      socket.uncork();
    }
    return true;
  }

  /** Writes and then waits until the client has taken enough: a writer that can wait (the backlog) is paced, never cut. False once closed. */
  async writePaced(message: SseMessage): Promise<boolean> {
    const socket = this.socket;
    if (this.closed || !socket) return false;
    if (this.put(socket, message)) return true;
    await new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done);
        this.waiting.delete(done);
        resolve();
      };
      socket.once('drain', done);
      this.waiting.add(done);
    });
    return !this.closed;
  }

  private put(socket: Socket, message: SseMessage): boolean {
    return socket.write(this.chunked ? message.framed() : message.bytes);
  }

  /** Closes a stream that fell behind at once, dropping what it holds: its client resumes from the last id it received. */
  cut(): void {
    if (this.closed) return;
    this.finish('slow');
    this.response.destroy();
  }

  /** Ends the stream after what is buffered (shutdown: the client reconnects elsewhere with Last-Event-ID). */
  end(): void {
    if (this.closed) return;
    this.finish('shutdown');
    this.response.end();
  }

  private finish(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    for (const wake of [...this.waiting]) wake();
    this.onClose(reason);
  }
}

export interface StreamLimits {
  perOwner: number;
  perProcess: number;
  retryAfterSeconds: number;
}

function limitReached(message: string, limit: number, retryAfterSeconds: number): ApiError {
  const retry = String(retryAfterSeconds);
  return new ApiError('rate_limited', message, undefined, { 'RateLimit-Limit': String(limit), 'RateLimit-Remaining': '0', 'RateLimit-Reset': retry, 'Retry-After': retry });
}

/**
 * The open streams of one process: slots per owner (an agent, or a source
 * address without a token) and per process, one heartbeat timer for all of
 * them, and the close of them all when the process drains.
 */
export class SseRegistry {
  private readonly limits: StreamLimits;
  private readonly open = new Set<SseConnection>();
  private readonly byOwner = new Map<string, number>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(limits: StreamLimits, heartbeatMs: number) {
    this.limits = limits;
    this.heartbeat = setInterval(() => {
      for (const connection of this.open) if (!connection.fellBehind()) connection.write(KEEP_ALIVE);
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** Takes a slot for `owner` or refuses with 429; the slot is given back when the connection closes. */
  connect(owner: string, response: ServerResponse, bufferBytes: number, onClose: (reason: CloseReason) => void): SseConnection {
    const held = this.byOwner.get(owner) ?? 0;
    if (held >= this.limits.perOwner) throw limitReached(`at most ${this.limits.perOwner} event streams at once per agent (or source address without a token)`, this.limits.perOwner, this.limits.retryAfterSeconds);
    if (this.open.size >= this.limits.perProcess) throw limitReached('this instance holds as many event streams as it serves; retry later or elsewhere', this.limits.perProcess, this.limits.retryAfterSeconds);
    this.byOwner.set(owner, held + 1);
    const connection = new SseConnection(response, bufferBytes, (reason) => {
      this.open.delete(connection);
      const left = (this.byOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.byOwner.set(owner, left);
      else this.byOwner.delete(owner);
      onClose(reason);
    });
    this.open.add(connection);
    return connection;
  }

  /** Ends every stream (drain), and keeps no timer alive. */
  closeAll(): void {
    clearInterval(this.heartbeat);
    for (const connection of [...this.open]) connection.end();
  }
}
