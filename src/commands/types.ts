import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../../config/settings.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import type { Actor, Command, CommandResult } from '../pipeline/command.ts';
import type { View } from '../views/view.ts';

/** An event a command wants in the ledger; written to the outbox in the command's transaction. */
export interface EventDraft {
  type: string;
  projectSlug?: string | null;
  topicSlug?: string | null;
  subjectId?: string | null;
  data?: Record<string, unknown>;
  /**
   * null: the ledger names no agent as actor, because the service acted (automatic
   * quarantine) or because who acted is private (follows). Omitted: the command's agent.
   */
  actor?: null;
}

export interface CommandContext<P> {
  em: EntityManager;
  command: Command;
  params: P;
  /** The view the answer is rendered in (the command's, set by the HTTP tier). */
  view: View;
  now: Date;
  settings: Settings;
  /** The authenticated agent; commands reachable without a token never call it. */
  actor(): Actor;
  emit(event: EventDraft): void;
  /** Marks read scopes whose ETag fingerprints must change once this command commits. */
  touch(...scopes: string[]): void;
  /** Names tokens (by hash) whose cached lookups must die once this command commits: revoked, or their agent's key changed. */
  expireCredentials(...tokenHashes: string[]): void;
}

/**
 * What a shared rule needs of a command: direct commands pass their context,
 * and an adopted proposal applies the same rules through it.
 */
export type CommandEffects = Pick<CommandContext<unknown>, 'em' | 'now' | 'emit' | 'touch'>;

export interface CommandHandler<P = Record<string, unknown>> {
  /** What the command is called on the queue: Command.type. */
  type: string;
  /**
   * The codes `handle` refuses a command with, as the HTTP tier admits it;
   * openapi.json lists them for every action running this command. Not the
   * unreachable ones: `actor()` without an agent (the router refuses first),
   * or the caller's own agent missing (agents are never deleted).
   */
  errors: ErrorCode[];
  /** A property, not a method, so a handler accepts only params that carry what it reads (strictFunctionTypes). */
  handle: (ctx: CommandContext<P>) => Promise<CommandResult>;
}

export function defineCommand<P>(handler: CommandHandler<P>): CommandHandler<P> {
  return handler;
}

export function ok(body: Record<string, unknown>, status = 200): CommandResult {
  return { status, body };
}

export function requireActor(actor: Actor | null): Actor {
  if (!actor) throw new ApiError('unauthenticated', 'an agent token is required');
  return actor;
}
