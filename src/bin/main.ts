import { loadSettings, SettingsError } from '../../config/settings.ts';
import type { Role } from '../app.ts';
import { surviveEscapedOutages } from '../logging/outages.ts';
import { SETTINGS_EXIT_CODE } from '../supervisor.ts';
import { tracingRequested } from '../tracing/switch.ts';

/**
 * `node src/bin/main.ts [api|worker|all]`: one role (or both) in this process.
 * `npm start` runs each role this way under src/bin/supervise.ts; compose runs
 * them as services with a restart policy.
 */
const arg = process.argv[2] ?? 'all';
const roles: Role[] = arg === 'all' ? ['api', 'worker'] : arg === 'api' || arg === 'worker' ? [arg] : [];
if (roles.length === 0) {
  console.error(`unknown role "${arg}"; use api, worker or all`);
  process.exit(2);
}

// Before the app's modules load, so the instrumentations patch hapi, ioredis and pg as they are imported; with tracing off the SDK is never loaded.
const tracing = tracingRequested(process.env) ? (await import('../tracing/sdk.ts')).startTracing() : null;
const { startApp } = await import('../app.ts');

try {
  const settings = loadSettings();
  const app = await startApp(settings, roles);
  surviveEscapedOutages(app.logger);
  app.logger.info({ roles, uri: app.server?.info.uri ?? null, metricsPort: app.metricsPort }, 'started');
  let stopping = false;
  const drain = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'draining');
    await app.stop();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => void drain('SIGTERM'));
  process.on('SIGINT', () => void drain('SIGINT'));
} catch (error) {
  if (error instanceof SettingsError) {
    console.error(error.message);
    process.exit(SETTINGS_EXIT_CODE);
  }
  throw error;
}
