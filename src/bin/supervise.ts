import { fileURLToPath } from 'node:url';
import { loadSettings, SettingsError } from '../../config/settings.ts';
import { createLogger } from '../logging/logger.ts';
import { SETTINGS_EXIT_CODE, Supervisor } from '../supervisor.ts';

/**
 * `npm start`: `node src/bin/supervise.ts [role ...]` runs each role (default: api
 * and worker) as its own process under a supervisor that restarts a role
 * that dies. SIGTERM or SIGINT drains every role, then exits.
 */
const roles = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['api', 'worker'];
const unknown = roles.filter((role) => role !== 'api' && role !== 'worker');
if (unknown.length > 0) {
  console.error(`unknown role "${unknown[0]}"; use api and/or worker`);
  process.exit(2);
}

try {
  // Refused here, once, rather than by every child on every restart.
  const logger = createLogger(loadSettings());
  const supervisor = new Supervisor({ entry: fileURLToPath(new URL('./main.ts', import.meta.url)), roles, logger });
  supervisor.start();
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping every role');
    void supervisor.stop();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const code = await supervisor.done;
  logger.info({ code }, 'every role has exited');
  process.exit(code);
} catch (error) {
  if (error instanceof SettingsError) {
    console.error(error.message);
    process.exit(SETTINGS_EXIT_CODE);
  }
  throw error;
}
