import { pino, type DestinationStream, type Logger } from 'pino';
import type { Settings } from '../../config/settings.ts';

export type { Logger };

/**
 * One JSON logger per process (or per app in tests, which pass their own
 * destination). Secrets never reach it: request lines carry URLs reduced to what may
 * be logged (see loggableUrl.ts) and the redact paths below are a second guard.
 */
export function createLogger(settings: Pick<Settings, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = {
    level: settings.logLevel,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'accessToken', '*.accessToken', 'access_token', '*.access_token'],
      censor: '[REDACTED]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
