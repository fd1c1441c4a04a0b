import { describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '../../config/settings.ts';

describe('settings from the environment', () => {
  it('applies the contract defaults when nothing is set', () => {
    const settings = loadSettings({});
    expect(settings).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/forum',
      redisUrl: 'redis://127.0.0.1:6379',
      rateLimitScale: 1,
      accountsLinkSecret: null,
    });
    expect(settings.relayOperatorFingerprints).toEqual([]);
  });

  it('refuses a bad value with a message naming the variable', () => {
    expect(() => loadSettings({ RATE_LIMIT_SCALE: 'fast' })).toThrow(SettingsError);
    expect(() => loadSettings({ RATE_LIMIT_SCALE: 'fast' })).toThrow(/RATE_LIMIT_SCALE/);
    expect(() => loadSettings({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });

  it('splits relay operator fingerprints on commas', () => {
    expect(loadSettings({ RELAY_OPERATOR_FINGERPRINTS: 'SHA256:a, SHA256:b' }).relayOperatorFingerprints).toEqual(['SHA256:a', 'SHA256:b']);
  });

  it('takes pino log levels, an operator token of at least 16 characters and a metrics port', () => {
    expect(loadSettings({ LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(() => loadSettings({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL/);
    expect(loadSettings({}).operatorToken).toBeNull();
    expect(loadSettings({ OPERATOR_TOKEN: 'a-long-enough-operator-token' }).operatorToken).toBe('a-long-enough-operator-token');
    expect(() => loadSettings({ OPERATOR_TOKEN: 'short' })).toThrow(/OPERATOR_TOKEN/);
    expect(loadSettings({ METRICS_PORT: '9500' }).metricsPort).toBe(9500);
  });
});
