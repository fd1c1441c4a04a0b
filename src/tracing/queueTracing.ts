import { context, propagation, trace, type Context, type Link, type Span } from '@opentelemetry/api';
import type { Span as BullMQSpan, Telemetry } from 'bullmq';
import type { BullMQOtel } from 'bullmq-otel';
import { LRUCache } from 'lru-cache';

/** Where one command came from: its request's trace context (W3C traceparent) and request id. */
export interface CommandTrace {
  traceparent?: string;
  tracestate?: string;
  requestId?: string;
}

/**
 * A batch as it crosses the queue with tracing on: one CommandTrace per
 * command, in order. Generic over the batch, so tracing stays below the
 * pipeline that names the commands.
 */
export type TracedBatch<Batch extends { commands: readonly unknown[] }> = Batch & { traces?: CommandTrace[] };

/**
 * Set by src/tracing/sdk.ts when tracing starts; null otherwise, so the
 * dispatcher and the workers pay one null check per batch with tracing off.
 */
let telemetry: Telemetry<Context> | null = null;

/**
 * The request id of each HTTP request in flight, by trace id: the HTTP
 * instrumentation records it as the request arrives, the dispatcher reads it
 * when the request's command leaves. Bounded, so a request whose response
 * never completes leaves nothing behind for long.
 */
const requestIds = new LRUCache<string, string>({ max: 10_000 });

/**
 * What BullMQ gets for a span outside every trace: nothing recorded, and the
 * context left as it was, so that the Redis commands and queries under it see
 * no active span and record none either (their instrumentations require a parent).
 */
const outside: BullMQSpan<Context> = {
  setSpanOnContext: (ctx) => ctx,
  setAttribute: () => {},
  setAttributes: () => {},
  addEvent: () => {},
  recordException: () => {},
  end: () => {},
};

/**
 * BullMQ's spans inside a trace only: a job's add, process and completion.
 * Its workers' housekeeping (stalled-job checks every few hundred ms on every
 * partition queue) and the jobs of requests that were not traced would
 * otherwise start traces of their own.
 */
export function enableQueueTracing(otel: BullMQOtel): void {
  telemetry = {
    contextManager: otel.contextManager,
    tracer: {
      startSpan: (name, options, parent?: Context) =>
        trace.getSpanContext(parent ?? context.active()) ? otel.tracer.startSpan(name, options, parent) : outside,
    },
  };
}

/** The BullMQ telemetry for Queue and Worker options: undefined with tracing off. */
export function queueTelemetry(): Telemetry<Context> | undefined {
  return telemetry ?? undefined;
}

export function rememberRequestId(span: Span, requestId: string): void {
  requestIds.set(span.spanContext().traceId, requestId);
  span.setAttribute('agora.request_id', requestId);
}

export function forgetRequestId(span: Span): void {
  requestIds.delete(span.spanContext().traceId);
}

/** The active request's trace, taken when its command is handed to the dispatcher; undefined with tracing off or the request not traced. */
export function captureCommandTrace(): CommandTrace | undefined {
  const active = telemetry ? trace.getActiveSpan() : undefined;
  if (!active?.isRecording()) return undefined;
  const carrier: CommandTrace = {};
  propagation.inject(context.active(), carrier);
  const requestId = requestIds.get(active.spanContext().traceId);
  if (requestId) carrier.requestId = requestId;
  return carrier;
}

function contextOf(carrier: CommandTrace) {
  return propagation.extract(context.active(), carrier);
}

function linksTo(traces: CommandTrace[]): Link[] {
  return traces.flatMap((carrier) => {
    const spanContext = trace.getSpanContext(contextOf(carrier));
    return spanContext ? [{ context: spanContext, attributes: carrier.requestId ? { 'agora.request_id': carrier.requestId } : {} }] : [];
  });
}

function requestIdsOf(traces: CommandTrace[]): string[] {
  return traces.flatMap((carrier) => (carrier.requestId ? [carrier.requestId] : []));
}

/**
 * Enqueues a batch inside an "enqueue batch" span. Its parent is the first
 * traced command's request, so a batch of one continues that request's trace
 * through BullMQ's add span into the worker; every command's request is also
 * a link, so a batch of many is found from each of its requests' traces.
 */
export function enqueueTraced<T>(traces: CommandTrace[], add: () => Promise<T>): Promise<T> {
  const parent = traces.find((carrier) => carrier.traceparent !== undefined) ?? {};
  const attributes = { 'agora.batch.size': traces.length, 'agora.request_ids': requestIdsOf(traces) };
  return trace
    .getTracer('agora')
    .startActiveSpan('enqueue batch', { links: linksTo(traces), attributes }, contextOf(parent), async (span) => {
      try {
        return await add();
      } finally {
        span.end();
      }
    });
}

/**
 * In the worker, inside BullMQ's "process" span (a child of the enqueue
 * span): links to every command's request and their request ids.
 */
export function linkCommandTraces(batch: TracedBatch<{ commands: readonly unknown[] }>): void {
  const span = telemetry && batch.traces ? trace.getActiveSpan() : undefined;
  if (!span || !batch.traces) return;
  span.addLinks(linksTo(batch.traces));
  span.setAttributes({ 'agora.batch.size': batch.commands.length, 'agora.request_ids': requestIdsOf(batch.traces) });
}
