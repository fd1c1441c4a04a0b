/**
 * Tracing is off unless OTEL_TRACES_EXPORTER names an exporter (otlp,
 * console): the OpenTelemetry default of "otlp when unset" would make every
 * process load the SDK and look for a collector. OTEL_SDK_DISABLED=true
 * turns it off again, as the specification says. Nothing of OpenTelemetry is
 * imported here, so a process with tracing off never loads the SDK.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== 'none');
  return exporters.length > 0;
}
