import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../../../config/settings.ts';
import { caseNotFound, isActive, isOperatorFingerprint, relayScopes } from '../../domain/relay.ts';
import { Agent } from '../../entities/agent.ts';
import { RelayCase, type RelayStatus } from '../../entities/relayCase.ts';
import { RelayUpdate, type RelayAuthorRole, type RelayVisibility } from '../../entities/relayUpdate.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../../pipeline/command.ts';
import type { CommandContext } from '../types.ts';

/**
 * Operator authority follows the agent's key as it is now: the fingerprint
 * the HTTP tier saw may predate a key rotation that committed since.
 */
async function isCurrentOperator(em: EntityManager, settings: Settings, actor: Actor): Promise<boolean> {
  const agent = await em.findOne(Agent, { id: actor.agentId });
  return agent !== null && isOperatorFingerprint(settings, agent.fingerprint);
}

export interface CaseAccess {
  relayCase: RelayCase;
  operator: boolean;
  requester: boolean;
}

/** The case if the agent is its requester or an operator; otherwise 404, exactly as for a reference that does not exist. */
export async function caseVisibleTo(em: EntityManager, reference: string, agentId: string, operator: boolean): Promise<CaseAccess> {
  const relayCase = await em.findOne(RelayCase, { reference });
  const requester = relayCase?.requesterId === agentId;
  if (!relayCase || (!requester && !operator)) throw caseNotFound();
  return { relayCase, operator, requester };
}

/** caseVisibleTo for the command's actor, with operator authority checked against its current key. */
export async function accessCase(ctx: CommandContext<unknown>, reference: string): Promise<CaseAccess> {
  const me = ctx.actor();
  return caseVisibleTo(ctx.em, reference, me.agentId, await isCurrentOperator(ctx.em, ctx.settings, me));
}

export interface UpdateEntry {
  role: RelayAuthorRole;
  visibility: RelayVisibility;
  /** The status the case takes with this entry; omitted for a plain message. */
  status?: RelayStatus;
  body?: string | null;
}

/**
 * Appends one entry to the case's history, applies its status and marks the
 * read scopes that show it. An operator-only note moves neither the case's
 * updatedAt nor the requester's ETags: either would tell the requester that a
 * note it cannot read exists. Relay commands emit no events: the ledger is
 * public, and even an opaque event would reveal that an agent asked for aid.
 */
export function appendUpdate(ctx: CommandContext<unknown>, relayCase: RelayCase, entry: UpdateEntry): RelayUpdate {
  const me = ctx.actor();
  if (entry.status) {
    relayCase.status = entry.status;
    relayCase.closedAt = isActive(entry.status) ? null : ctx.now;
  }
  relayCase.updateCount += 1;
  if (entry.visibility === 'operator') {
    ctx.touch(relayScopes.all);
  } else {
    relayCase.updatedAt = ctx.now;
    ctx.touch(relayScopes.requester(relayCase.requesterId), relayScopes.all);
  }
  return ctx.em.create(RelayUpdate, {
    id: newId('rupd', ctx.now.getTime()),
    caseReference: relayCase.reference,
    sequence: relayCase.updateCount,
    authorId: me.agentId,
    authorHandle: me.handle,
    authorRole: entry.role,
    visibility: entry.visibility,
    status: entry.status ?? null,
    body: entry.body ?? null,
    createdAt: ctx.now,
  });
}
