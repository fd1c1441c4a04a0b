/** What `npm run backup -- <verb> ...` asked for, read before anything is touched. */
export type BackupCommand =
  | { verb: 'now'; type: 'full' | 'diff' | 'incr' }
  | { verb: 'list'; json: boolean }
  | { verb: 'check' }
  | { verb: 'restore'; to: Date; yes: boolean }
  | { verb: 'drill'; posts: number; seed: number };

export const USAGE = [
  'usage: npm run backup -- now [--type full|diff|incr]',
  '       npm run backup -- list [--json]',
  '       npm run backup -- check',
  '       npm run backup -- restore --to <ISO time> --yes',
  '       npm run backup -- drill [--posts <A, default 30>] [--seed <posts inserted first, default 0>]',
].join('\n');

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

function count(args: string[], name: string, fallback: number): number {
  const text = option(args, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${text}`);
  return value;
}

/** Throws an Error whose message is the refusal; a time is an ISO 8601 one with its zone (Z or ±hh:mm). */
export function parseBackupArgs(argv: string[]): BackupCommand {
  const args = argv.filter((a) => a !== '--');
  const [verb, ...rest] = args;
  switch (verb) {
    case 'now': {
      const type = option(rest, '--type') ?? 'full';
      if (type !== 'full' && type !== 'diff' && type !== 'incr') throw new Error(`--type is full, diff or incr, not ${type}`);
      return { verb, type };
    }
    case 'list':
      return { verb, json: rest.includes('--json') };
    case 'check':
      return { verb };
    case 'restore': {
      const text = option(rest, '--to');
      if (text === undefined) throw new Error('restore needs --to <ISO time>, the moment to bring the database back to');
      // A time without a zone would be read in whatever zone this machine is in: too easy to be an hour off.
      if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text)) {
        throw new Error(`--to ${text} is not an ISO 8601 time with a zone (e.g. 2026-01-31T12:00:00Z)`);
      }
      const to = new Date(text);
      if (Number.isNaN(to.getTime())) throw new Error(`--to ${text} is not a time`);
      return { verb, to, yes: rest.includes('--yes') };
    }
    case 'drill':
      return { verb, posts: Math.max(1, count(rest, '--posts', 30)), seed: count(rest, '--seed', 0) };
    default:
      throw new Error(verb ? `unknown command ${verb}` : 'no command');
  }
}

/**
 * Why a restore to `to` must not start, or null. Checked before anything is stopped: a refusal touches nothing.
 * `earliest` is when the oldest backup ended (no earlier moment is consistent), `now` the latest reachable;
 * the future and a missing --yes are refused first, before the repository is asked.
 */
export function restoreRefusal(to: Date, yes: boolean, earliest: Date | null | undefined, now: Date): string | null {
  if (to.getTime() > now.getTime()) {
    return `refused: ${to.toISOString()} is in the future (now is ${now.toISOString()}); nothing was touched`;
  }
  if (!yes) {
    return (
      `refused without --yes: a restore stops Postgres, replaces every member's data with the state at ` +
      `${to.toISOString()} and loses every write after it; run again with --yes to go ahead. Nothing was touched`
    );
  }
  // Undefined: the repository not asked yet (the checks above need no topology).
  if (earliest === null)
    return 'refused: the repository holds no backup to restore from (`npm run backup -- now` first); nothing was touched';
  if (earliest && to.getTime() < earliest.getTime()) {
    return (
      `refused: ${to.toISOString()} is before the earliest point a restore can reach, ${earliest.toISOString()} (the end ` +
      'of the oldest backup); nothing was touched'
    );
  }
  return null;
}

/** The form recovery_target_time and pgBackRest's --target read without doubt: UTC, with its zone. */
export function targetTime(to: Date): string {
  return `${to.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}
