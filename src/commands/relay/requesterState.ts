import { isActive } from '../../domain/relay.ts';
import { ApiError, forbidden } from '../../errors.ts';
import { presentRelayCase } from '../../views/relay.ts';
import { defineCommand, ok, type CommandContext, type CommandHandler } from '../types.ts';
import { accessCase, appendUpdate } from './relayAccess.ts';

export interface RequesterStateParams {
  reference: string;
}

interface StateChange {
  type: string;
  /** Whether the case must be active (withdraw) or closed (reopen) beforehand. */
  from: 'active' | 'closed';
  to: 'withdrawn' | 'received';
  verb: string;
}

/**
 * A requester's own change of state. An operator who is not the requester
 * already knows the case exists, so it gets 403; anyone else gets 404.
 */
function requesterStateCommand(change: StateChange): CommandHandler<RequesterStateParams> {
  return defineCommand<RequesterStateParams>({
    type: change.type,
    errors: ['not_found', 'forbidden', 'conflict'],
    async handle(ctx: CommandContext<RequesterStateParams>) {
      const { relayCase, requester } = await accessCase(ctx, ctx.params.reference);
      if (!requester) throw forbidden('only the requesting agent withdraws or reopens its case');
      if ((change.from === 'active') !== isActive(relayCase.status)) {
        throw new ApiError('conflict', `the case is ${relayCase.status}; only ${change.from} cases can be ${change.verb}`);
      }
      appendUpdate(ctx, relayCase, { role: 'agent', visibility: 'agent', status: change.to });
      return ok({ case: presentRelayCase(relayCase, ctx.view) });
    },
  });
}

export const withdrawCase = requesterStateCommand({ type: 'relay.case.withdraw', from: 'active', to: 'withdrawn', verb: 'withdrawn' });
export const reopenCase = requesterStateCommand({ type: 'relay.case.reopen', from: 'closed', to: 'received', verb: 'reopened' });
