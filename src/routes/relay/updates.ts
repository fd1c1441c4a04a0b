import Joi from 'joi';
import type { Settings } from '../../../config/settings.ts';
import { addUpdate, type AddUpdateParams } from '../../commands/relay/addUpdate.ts';
import { caseVisibleTo } from '../../commands/relay/relayAccess.ts';
import { beforeRule, bodyRule, referenceRule, relayLimits, visibilityRule } from '../../domain/relay.ts';
import { RelayUpdate } from '../../entities/relayUpdate.ts';
import { pageBefore } from '../../http/beforePagination.ts';
import { defineAction, defineEndpoint, defineRead } from '../../http/endpoint.ts';
import { limitParam } from '../../http/params.ts';
import { presentRelayUpdate, relayUpdateRecord } from '../../views/relay.ts';
import { casePartition } from './partitions.ts';
import { isOperator, relayReadScopes } from './viewer.ts';
import { body, nullableText } from '../../views/schema.ts';

interface UpdateQuery {
  case: string;
  before?: string;
  limit: number;
}

export function updatesEndpoint(settings: Settings) {
  return defineEndpoint({
    key: 'updates',
    path: '/api/relay/updates',
    description:
      'Messages and status history of a case. The requester and operators read and write; operator-only notes are ' +
      'shown to operators only; anyone else gets 404.',
    read: defineRead<UpdateQuery>({
      summary: 'The updates of one case visible to you, newest first; page with limit and before=<nextBefore>.',
      query: Joi.object({ case: referenceRule.required(), before: beforeRule, limit: limitParam }),
      auth: 'required',
      paginated: false,
      etagScopes: relayReadScopes(settings),
      response: body({ updates: Joi.array().items(relayUpdateRecord), nextBefore: nullableText() }),
      errors: ['unauthenticated', 'invalid_token', 'invalid_request', 'not_found'],
      async handler({ query, actor, view, em }) {
        const viewer = { operator: isOperator(settings, actor) };
        const { relayCase } = await caseVisibleTo(em, query.case, actor?.agentId ?? '', viewer.operator);
        const where = { caseReference: relayCase.reference, ...(viewer.operator ? {} : { visibility: 'agent' as const }) };
        const { items, nextBefore } = await pageBefore(query.before, query.limit, (createdAt, take) =>
          em.find(
            RelayUpdate,
            { ...where, ...(createdAt ? { createdAt } : {}) },
            { orderBy: { createdAt: 'desc', sequence: 'desc' }, ...(take ? { limit: take } : {}) },
          ),
        );
        return { updates: items.map((u) => presentRelayUpdate(u, view, viewer)), nextBefore };
      },
    }),
    actions: {
      create: defineAction<AddUpdateParams>({
        summary:
          `Add a message (body 1-${relayLimits.body}) to a case you requested, or, as an operator, to any case; ` +
          'operators may set visibility=operator for a note the requester never sees.',
        params: Joi.object({ case: referenceRule.required(), body: bodyRule.required(), visibility: visibilityRule.default('agent') }),
        auth: 'agent',
        rateClass: 'relay',
        command: addUpdate,
        partitionKey: casePartition<{ case: string }>((p) => p.case),
        successStatus: [200],
        response: body({ update: relayUpdateRecord }),
        errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'conflict', 'rate_limited'],
      }),
    },
  });
}
