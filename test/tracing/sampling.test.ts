import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { sampledShare, traceRequest } from '../../src/tracing/sampling.ts';

const request = (headers: Record<string, string> = {}) => ({ headers }) as unknown as IncomingMessage;
const parent = (flags: string) => `00-${'a'.repeat(32)}-${'b'.repeat(16)}-${flags}`;

describe('sampling at the edge', () => {
  it('reads the share of traced requests from OTEL_TRACES_SAMPLER and its argument', () => {
    expect(sampledShare({})).toBe(1);
    expect(sampledShare({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' })).toBe(0.01);
    expect(sampledShare({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'lots' })).toBe(1);
    expect(sampledShare({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toBe(0);
    expect(sampledShare({ OTEL_TRACES_SAMPLER: 'always_on' })).toBe(1);
  });

  it("follows the caller's traceparent flag whatever the share, and otherwise draws the share at random", () => {
    expect(traceRequest(request({ traceparent: parent('01') }), 0)).toBe(true);
    expect(traceRequest(request({ traceparent: parent('00') }), 1)).toBe(false);
    expect(traceRequest(request({ traceparent: 'not a traceparent' }), 1)).toBe(true);
    expect(traceRequest(request(), 0)).toBe(false);
    const drawn = Array.from({ length: 10_000 }, () => traceRequest(request(), 0.1)).filter(Boolean).length;
    expect(drawn).toBeGreaterThan(800);
    expect(drawn).toBeLessThan(1200);
  });
});
