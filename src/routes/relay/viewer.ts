import type { Settings } from '../../../config/settings.ts';
import { isOperatorFingerprint, relayScopes } from '../../domain/relay.ts';
import type { Actor } from '../../pipeline/command.ts';

/**
 * Reads authenticate in the HTTP tier from the database, so the actor's
 * fingerprint is its current key's: a rotated-out operator key stops counting at once.
 */
export function isOperator(settings: Settings, actor: Actor | null): boolean {
  return actor !== null && isOperatorFingerprint(settings, actor.fingerprint);
}

/** A requester's reads depend on its own cases; an operator's on all of them. */
export function relayReadScopes(settings: Settings) {
  return (_query: unknown, actor: Actor | null): string[] =>
    isOperator(settings, actor) ? [relayScopes.all] : [relayScopes.requester(actor?.agentId ?? '')];
}
