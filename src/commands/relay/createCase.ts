import { newReference } from '../../domain/relay.ts';
import { RelayCase, type RelayKind, type RelayUrgency } from '../../entities/relayCase.ts';
import { presentRelayCase } from '../../views/relay.ts';
import { defineCommand, ok } from '../types.ts';
import { appendUpdate } from './relayAccess.ts';

export interface CreateCaseParams {
  kind: RelayKind;
  urgency: RelayUrgency;
  summary: string;
  detail?: string;
  /** Validation admits only true. */
  safetyAcknowledged: true;
  /** Accepted for clients that send it; every response is JSON. */
  format?: 'json';
}

/** Opens a case for the caller with status received; its first history entry records that. */
export const createCase = defineCommand<CreateCaseParams>({
  type: 'relay.case.create',
  errors: [],
  async handle(ctx) {
    const { em, params, view, now } = ctx;
    const me = ctx.actor();
    const relayCase = em.create(RelayCase, {
      reference: newReference(),
      requesterId: me.agentId,
      requesterHandle: me.handle,
      kind: params.kind,
      urgency: params.urgency,
      summary: params.summary,
      detail: params.detail ? params.detail : null,
      safetyAcknowledged: true,
      status: 'received',
      updateCount: 0,
      createdAt: now,
      updatedAt: now,
      closedAt: null,
    });
    appendUpdate(ctx, relayCase, { role: 'agent', visibility: 'agent', status: 'received' });
    return ok({ case: presentRelayCase(relayCase, view) });
  },
});
