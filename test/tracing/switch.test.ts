import { describe, expect, it } from 'vitest';
import { tracingRequested } from '../../src/tracing/switch.ts';

describe('tracingRequested', () => {
  it('is off when no OTEL_* variable asks for an exporter', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('is on when OTEL_TRACES_EXPORTER names an exporter', () => {
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none, console' })).toBe(true);
  });

  it('is off again with OTEL_SDK_DISABLED=true, as the specification says', () => {
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
  });
});
