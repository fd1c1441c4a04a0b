import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.ts';
import { rateLimitFields } from './rateLimitFields.ts';

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

/** Why a stream ended: its client left, it fell behind its buffer, the process is draining, or its token was revoked. */
export type CloseReason = 'client' | 'slow' | 'shutdown' | 'revoked';

/** The last words of a stream whose token was revoked: a comment (no event id, so no resume position moves). */
const TOKEN_REVOKED = new SseMessage(': closed: the access token of this stream was revoked\n\n');

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

  /**
   * Ends the stream with a last comment saying its token was revoked (reconnecting with it answers 401), and
   * closes the connection: left to keep-alive, it would stay open another keepAliveTimeout (6 s with Node's
   * defaults), which a client that waits for the connection to close takes for the stream still open.
   */
  revoke(): void {
    if (this.closed) return;
    this.write([TOKEN_REVOKED]);
    this.finish('revoked');
    const socket = this.socket;
    this.response.end(() => socket?.end());
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

/** What a new stream is opened with: its response, the hash of the token it authenticated with (null without one), and what to do once it closes. */
export interface StreamOpening {
  response: ServerResponse;
  tokenHash: string | null;
  bufferBytes: number;
  onClose: (reason: CloseReason) => void;
}

export function limitReached(message: string, limit: number, retryAfterSeconds: number): ApiError {
  const retry = String(retryAfterSeconds);
  // Open streams at once are not a time window: the standard fields carry no w.
  const standard = rateLimitFields({ policy: 'stream', quota: limit, remaining: 0, resetSeconds: retryAfterSeconds });
  return new ApiError('rate_limited', message, undefined, {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': '0',
    'RateLimit-Reset': retry,
    'Retry-After': retry,
    ...standard,
  });
}

/**
 * The open streams of one process: at most `perProcess` of them, one
 * heartbeat timer for all, the streams of each token (ended when it is
 * revoked), and the close of them all when the process drains. The slots
 * per owner, which count across instances, are src/store/streamSlots.ts.
 */
export class SseRegistry {
  private readonly perProcess: number;
  private readonly retryAfterSeconds: number;
  private readonly open = new Set<SseConnection>();
  private readonly byToken = new Map<string, Set<SseConnection>>();
  private readonly heartbeat: NodeJS.Timeout;
  private onTokenStream: ((tokenHash: string) => void) | null = null;

  constructor(limits: Omit<StreamLimits, 'perOwner'>, heartbeatMs: number) {
    this.perProcess = limits.perProcess;
    this.retryAfterSeconds = limits.retryAfterSeconds;
    this.heartbeat = setInterval(() => {
      for (const connection of this.open) if (!connection.fellBehind()) connection.write(KEEP_ALIVE);
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** Refuses with 429 when this process holds as many streams as it serves. */
  checkRoom(): void {
    if (this.open.size >= this.perProcess)
      throw limitReached(
        'this instance holds as many event streams as it serves; retry later or elsewhere',
        this.perProcess,
        this.retryAfterSeconds,
      );
  }

  /** Registers a stream (call with a response that is still open); it leaves the registry when it closes, for whatever reason. */
  connect({ response, tokenHash, bufferBytes, onClose }: StreamOpening): SseConnection {
    this.checkRoom();
    const connection = new SseConnection(response, bufferBytes, (reason) => {
      this.open.delete(connection);
      if (tokenHash !== null) {
        const streams = this.byToken.get(tokenHash);
        streams?.delete(connection);
        if (streams?.size === 0) this.byToken.delete(tokenHash);
      }
      onClose(reason);
    });
    this.open.add(connection);
    if (tokenHash !== null) {
      this.byToken.set(tokenHash, (this.byToken.get(tokenHash) ?? new Set()).add(connection));
      this.onTokenStream?.(tokenHash);
    }
    return connection;
  }

  /** Tells `listener` the token of each stream registered with one: a revocation announced while the stream was set up found it not yet here. */
  watchTokens(listener: (tokenHash: string) => void): void {
    this.onTokenStream = listener;
  }

  /** The hashes of the tokens open streams were opened with. */
  tokenHashes(): string[] {
    return [...this.byToken.keys()];
  }

  /** Ends every stream opened with one of these (revoked) tokens, with a last comment saying so. */
  revoke(tokenHashes: Iterable<string>): void {
    for (const hash of tokenHashes) for (const connection of [...(this.byToken.get(hash) ?? [])]) connection.revoke();
  }

  /** Ends every stream (drain), and keeps no timer alive. */
  closeAll(): void {
    clearInterval(this.heartbeat);
    for (const connection of [...this.open]) connection.end();
  }
}
