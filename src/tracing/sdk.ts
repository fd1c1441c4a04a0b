import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { register as registerImportHooks } from 'import-in-the-middle/register-hooks.mjs';
import { HapiInstrumentation } from '@opentelemetry/instrumentation-hapi';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { BullMQOtel } from 'bullmq-otel';
import { enableQueueTracing, forgetRequestId, rememberRequestId } from './queueTracing.ts';
import { edgeSampler, sampledShare, traceRequest } from './sampling.ts';

/** The modules the instrumentations patch; only these go through the import hook. */
const INSTRUMENTED = ['@hapi/hapi', 'ioredis', 'pg', 'pg-pool'];

/** Same rule as src/http/requestLog.ts: a client's X-Request-Id is kept when it is a sane token. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The request id decided as the request arrives, before hapi sees it: the
 * client's when sane, otherwise a fresh one written into the request's
 * headers, where requestIdOf (src/http/requestLog.ts) adopts it. The span
 * and the response's X-Request-Id then name the same id.
 */
function requestIdOf(request: IncomingMessage): string {
  const offered = request.headers['x-request-id'];
  if (typeof offered === 'string' && CLIENT_REQUEST_ID.test(offered)) return offered;
  const fresh = randomUUID();
  request.headers['x-request-id'] = fresh;
  return fresh;
}

export interface Tracing {
  /** Ends and exports the spans still buffered. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry for this process: HTTP and hapi on the API, ioredis
 * and pg everywhere, BullMQ's producer and consumer spans across the queue.
 * The exporter, endpoint and service name come from the standard OTEL_*
 * variables (docs/operations.md), and so does the sampler's share, applied
 * as each request arrives (sampling.ts); metrics and logs stay with
 * Prometheus and pino unless OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER ask
 * otherwise. Must run before hapi, ioredis and pg are imported: main.ts
 * imports the app after it. Tests pass their own span processors.
 */
export function startTracing(overrides: Partial<NodeSDKConfiguration> = {}): Tracing {
  registerImportHooks({ include: INSTRUMENTED });
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const share = sampledShare(process.env);
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'agora',
    // The sampling decision is taken as a request arrives (sampling.ts), before any span exists.
    sampler: edgeSampler,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => !traceRequest(request, share),
        requestHook: (span, request) => {
          if (!('headers' in request) || 'setHeader' in request) return;
          rememberRequestId(span, requestIdOf(request));
        },
        // Called as the request arrives (with the response still to be written): forget the id once the response is done.
        responseHook: (span, response) => {
          if ('setHeader' in response) response.once('close', () => forgetRequestId(span));
        },
      }),
      new HapiInstrumentation(),
      // A span per command inside a trace only, like pg's: none for a job's commands when its request was not traced.
      new IORedisInstrumentation({ requireParentSpan: true }),
      // A span per statement with its text (parameters are never recorded); none for a statement outside a trace.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
    ...overrides,
  });
  sdk.start();
  enableQueueTracing(new BullMQOtel({ tracerName: 'bullmq' }));
  return { shutdown: () => sdk.shutdown() };
}
