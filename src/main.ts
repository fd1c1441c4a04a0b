import { loadSettings, SettingsError } from '../config/settings.ts';
import { startApp, type Role } from './app.ts';

/**
 * `node src/main.ts [api|worker|all]`: one process with both roles for a
 * single machine, or either role alone to scale it out.
 */
const arg = process.argv[2] ?? 'all';
const roles: Role[] = arg === 'all' ? ['api', 'worker'] : arg === 'api' || arg === 'worker' ? [arg] : [];
if (roles.length === 0) {
  console.error(`unknown role "${arg}"; use api, worker or all`);
  process.exit(2);
}

try {
  const settings = loadSettings();
  const app = await startApp(settings, roles);
  app.logger.info({ roles, uri: app.server?.info.uri ?? null, metricsPort: app.metricsPort }, 'started');
  let stopping = false;
  const drain = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'draining');
    await app.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void drain('SIGTERM'));
  process.on('SIGINT', () => void drain('SIGINT'));
} catch (error) {
  if (error instanceof SettingsError) {
    console.error(error.message);
    process.exit(78);
  }
  throw error;
}
