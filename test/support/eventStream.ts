import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

export interface StreamedEvent {
  id: string;
  event: string;
  data: any;
}

/**
 * A Server-Sent Events client over node:http (fetch cannot stop reading
 * without cancelling): parses messages as they come, counts comment lines,
 * and can pause reading to play a slow consumer.
 */
export class EventStreamReader {
  readonly events: StreamedEvent[] = [];
  comments = 0;
  retryMs: number | null = null;
  ended = false;
  readonly response: IncomingMessage;
  private readonly request: ClientRequest;
  private buffer = '';
  private readonly waiters = new Set<() => void>();

  private constructor(request: ClientRequest, response: IncomingMessage) {
    this.request = request;
    this.response = response;
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.take(chunk));
    const end = () => {
      this.ended = true;
      this.wake();
    };
    response.on('end', end);
    response.on('close', end);
    response.on('error', end);
    request.on('error', end);
  }

  /** Opens the stream; a non-200 answer comes back as { status, headers, body } with the JSON body parsed. */
  static async open(base: string, query: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<EventStreamReader> {
    const opened = await EventStreamReader.connect(base, query, headers);
    if (!(opened instanceof EventStreamReader)) throw new Error(`stream refused: ${opened.status} ${JSON.stringify(opened.body)}`);
    return opened;
  }

  static connect(
    base: string,
    query: Record<string, string> = {},
    headers: Record<string, string> = {},
  ): Promise<EventStreamReader | { status: number; headers: IncomingMessage['headers']; body: any }> {
    const qs = new URLSearchParams(query).toString();
    const url = new URL(`/api/forum/events/stream${qs ? `?${qs}` : ''}`, base);
    return new Promise((resolve, reject) => {
      const request = httpRequest(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
        if (response.statusCode === 200) return resolve(new EventStreamReader(request, response));
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? JSON.parse(text) : null }),
        );
      });
      request.on('error', reject);
      request.end();
    });
  }

  get lastId(): string | null {
    return this.events.at(-1)?.id ?? null;
  }

  ids(): string[] {
    return this.events.map((e) => e.id);
  }

  /** Waits until `check` holds (checked on every message and at the end of the stream). */
  async until(check: () => boolean, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (this.ended && !check()) throw new Error(`the stream ended before the condition held (${this.events.length} events)`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`condition not met within ${ms} ms (${this.events.length} events)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 200));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  /** Resolves when the server ends (or cuts) the stream. */
  async closedByServer(ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('the stream is still open');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  pause(): void {
    this.response.pause();
  }

  resume(): void {
    this.response.resume();
  }

  close(): void {
    this.request.destroy();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
      }
      if (fields.retry !== undefined) this.retryMs = Number(fields.retry);
      if (fields.data !== undefined)
        this.events.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: JSON.parse(fields.data) });
    }
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
    this.waiters.clear();
  }
}
