import type { IncomingMessage } from 'node:http';
import { type Context, type SpanKind as ApiSpanKind, SpanKind, trace } from '@opentelemetry/api';

/** @opentelemetry/sdk-trace's SamplingDecision, whose values the specification fixes. */
const NOT_RECORD = 0;
const RECORD_AND_SAMPLED = 2;

/**
 * The share of requests that start a trace, read from the standard
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG: `*traceidratio` takes the
 * argument (1 when it is missing or not a number in [0, 1]), `*always_off`
 * is 0, anything else (`parentbased_always_on`, the default) 1.
 */
export function sampledShare(env: NodeJS.ProcessEnv): number {
  const sampler = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  if (sampler.endsWith('always_off')) return 0;
  if (!sampler.endsWith('traceidratio')) return 1;
  const share = Number(env.OTEL_TRACES_SAMPLER_ARG ?? 1);
  return Number.isFinite(share) && share >= 0 && share <= 1 ? share : 1;
}

const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-([\da-f]{2})$/;

/**
 * Whether an incoming request starts (or continues) a trace: the caller's
 * decision when it sends a valid W3C traceparent, otherwise `share` of the
 * requests at random. Taken before any instrumentation runs, so that a
 * request left out costs nothing: no span, hence none of hapi's, ioredis's,
 * pg's or BullMQ's spans under it, and no trace context on its job.
 */
export function traceRequest(request: IncomingMessage, share: number): boolean {
  const parent = request.headers.traceparent;
  const flags = typeof parent === 'string' ? TRACEPARENT.exec(parent.trim())?.[1] : undefined;
  if (flags !== undefined) return (Number.parseInt(flags, 16) & 1) === 1;
  return share >= 1 || (share > 0 && Math.random() < share);
}

/**
 * The SDK's sampler once the decision is taken at the edge: a span follows
 * its parent; a root is recorded only when it is an incoming request's span
 * (one traceRequest let through). Any other root (a Redis command or a query
 * outside every request and job) is not.
 */
export const edgeSampler = {
  shouldSample(parent: Context, _traceId: string, _name: string, kind: ApiSpanKind) {
    const parentSpan = trace.getSpanContext(parent);
    if (parentSpan && trace.isSpanContextValid(parentSpan))
      return { decision: parentSpan.traceFlags & 1 ? RECORD_AND_SAMPLED : NOT_RECORD };
    return { decision: kind === SpanKind.SERVER ? RECORD_AND_SAMPLED : NOT_RECORD };
  },
  toString: () => 'EdgeSampler',
};
