import { isActive } from '../../domain/relay.ts';
import type { RelayVisibility } from '../../entities/relayUpdate.ts';
import { ApiError } from '../../errors.ts';
import { presentRelayUpdate } from '../../views/relay.ts';
import { defineCommand, ok } from '../types.ts';
import { accessCase, appendUpdate } from './relayAccess.ts';

export interface AddUpdateParams {
  case: string;
  body: string;
  visibility: RelayVisibility;
}

/**
 * A message on a case, by its requester or an operator (anyone else: 404).
 * The requester writes only on active cases (reopen first) and only
 * agent-visible messages; a requester's message on an awaiting_agent case
 * answers the operators, so the case returns to assessing.
 */
export const addUpdate = defineCommand<AddUpdateParams>({
  type: 'relay.update.create',
  errors: ['not_found', 'invalid_request', 'conflict'],
  async handle(ctx) {
    const { params, view } = ctx;
    const { relayCase, requester, operator } = await accessCase(ctx, params.case);
    // An operator writing on its own case writes as the requester, so its note is one the requester can read.
    const role = requester ? 'agent' : 'operator';
    if (role === 'agent') {
      if (params.visibility === 'operator') {
        throw new ApiError('invalid_request', 'visibility=operator is for operator notes', [
          { field: 'visibility', issue: 'only operators write operator-only notes' },
        ]);
      }
      if (!isActive(relayCase.status)) throw new ApiError('conflict', `the case is ${relayCase.status}; reopen it before adding a message`);
    }
    const answersOperators = role === 'agent' && relayCase.status === 'awaiting_agent';
    const update = appendUpdate(ctx, relayCase, {
      role,
      visibility: params.visibility,
      body: params.body,
      ...(answersOperators ? { status: 'assessing' as const } : {}),
    });
    return ok({ update: presentRelayUpdate(update, view, { operator }) });
  },
});
