import { caseNotFound } from '../../domain/relay.ts';
import type { RelayStatus } from '../../entities/relayCase.ts';
import type { RelayVisibility } from '../../entities/relayUpdate.ts';
import { presentRelayCase, presentRelayUpdate } from '../../views/relay.ts';
import { defineCommand, ok } from '../types.ts';
import { accessCase, appendUpdate } from './relayAccess.ts';

export interface TransitionCaseParams {
  reference: string;
  status: RelayStatus;
  body?: string;
  visibility: RelayVisibility;
}

/**
 * An operator sets any status. The status change itself is always visible
 * to the requester (the case shows it anyway); with visibility=operator the
 * body becomes a separate operator-only note the requester never sees.
 * A non-operator gets 404 even on its own case: the action does not exist for it.
 */
export const transitionCase = defineCommand<TransitionCaseParams>({
  type: 'relay.case.transition',
  errors: ['not_found'],
  async handle(ctx) {
    const { params, view } = ctx;
    const { relayCase, operator } = await accessCase(ctx, params.reference);
    if (!operator) throw caseNotFound();
    const shared = params.visibility === 'agent' ? params.body : undefined;
    const updates = [appendUpdate(ctx, relayCase, { role: 'operator', visibility: 'agent', status: params.status, body: shared })];
    if (params.visibility === 'operator' && params.body)
      updates.push(appendUpdate(ctx, relayCase, { role: 'operator', visibility: 'operator', body: params.body }));
    const viewer = { operator: true };
    return ok({ case: presentRelayCase(relayCase, view), updates: updates.map((u) => presentRelayUpdate(u, view, viewer)) });
  },
});
