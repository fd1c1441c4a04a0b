import type { EntityManager } from '@mikro-orm/postgresql';
import Joi from 'joi';
import type { Settings } from '../../../config/settings.ts';
import { createCase, type CreateCaseParams } from '../../commands/relay/createCase.ts';
import { caseVisibleTo } from '../../commands/relay/relayAccess.ts';
import { reopenCase, withdrawCase, type RequesterStateParams } from '../../commands/relay/requesterState.ts';
import { transitionCase, type TransitionCaseParams } from '../../commands/relay/transitionCase.ts';
import { beforeRule, bodyRule, kindRule, referenceRule, relayLimits, statusRule, urgencyRule, visibilityRule } from '../../domain/relay.ts';
import { latestRelayUpdates } from '../../db/listingReads.ts';
import { findRows } from '../../db/rows.ts';
import { RelayCase, type RelayKind, type RelayStatus, type RelayUrgency } from '../../entities/relayCase.ts';
import { RelayUpdate } from '../../entities/relayUpdate.ts';
import type { ErrorCode } from '../../errors.ts';
import { pageBefore } from '../../http/beforePagination.ts';
import { defineAction, defineEndpoint, defineRead } from '../../http/endpoint.ts';
import { filterParam, flagParam, limitParam } from '../../http/params.ts';
import { presentRelayCase, relayCaseRecord, relayUpdateRecord, type RelayViewer } from '../../views/relay.ts';
import { casePartition, requesterPartition } from './partitions.ts';
import { isOperator, relayReadScopes } from './viewer.ts';
import { body, nullableText } from '../../views/schema.ts';

interface CaseQuery {
  reference?: string;
  status?: RelayStatus;
  kind?: RelayKind;
  urgency?: RelayUrgency;
  include?: 'updates';
  before?: string;
  limit: number;
}

const mutationErrors: ErrorCode[] = ['invalid_request', 'unauthenticated', 'invalid_token', 'rate_limited'];
const byReference = casePartition<{ reference: string }>((p) => p.reference);
const ownCaseParams = Joi.object({ reference: referenceRule.required() });

/** The latest `includedUpdates` visible updates of each case, oldest first, and whether older ones exist. */
async function latestUpdates(
  em: EntityManager,
  references: string[],
  viewer: RelayViewer,
): Promise<Map<string, { items: RelayUpdate[]; more: boolean }>> {
  const out = new Map<string, { items: RelayUpdate[]; more: boolean }>(references.map((r) => [r, { items: [], more: false }]));
  if (references.length === 0) return out;
  const rows = await latestRelayUpdates(em, references, viewer.operator, relayLimits.includedUpdates);
  for (const { rank, ...row } of rows) {
    const entry = out.get(row.case_reference as string);
    if (!entry) continue;
    // Rows come oldest first, so the one beyond the limit is the first of its case.
    if (Number(rank) > relayLimits.includedUpdates) entry.more = true;
    else entry.items.push(em.map(RelayUpdate, row));
  }
  return out;
}

export function casesEndpoint(settings: Settings) {
  return defineEndpoint({
    key: 'cases',
    path: '/api/relay/cases',
    description:
      'Private aid cases. action=create opens one (status received); the requester may withdraw an active case or ' +
      'reopen a closed one; configured operators transition any case. A case other than your own answers 404 unless ' +
      'you are an operator.',
    read: defineRead<CaseQuery>({
      summary:
        'Your cases (operators: every case), newest first; reference reads one case. Compact by default; view=full and ' +
        'include=updates are opt-ins; page with limit and before=<nextBefore>.',
      query: Joi.object({
        reference: referenceRule,
        status: filterParam,
        kind: filterParam,
        urgency: filterParam,
        include: Joi.string().valid('updates'),
        before: beforeRule,
        limit: limitParam,
      }),
      auth: 'required',
      paginated: false,
      etagScopes: relayReadScopes(settings),
      response: Joi.alternatives().try(
        body({ case: relayCaseRecord }),
        body({ cases: Joi.array().items(relayCaseRecord), nextBefore: nullableText() }),
      ),
      errors: ['unauthenticated', 'invalid_token', 'invalid_request', 'not_found'],
      async handler({ query, actor, view, em }) {
        const viewer = { operator: isOperator(settings, actor) };
        const agentId = actor?.agentId ?? '';
        const withUpdates = async (cases: RelayCase[]) => {
          const updates =
            query.include === 'updates'
              ? await latestUpdates(
                  em,
                  cases.map((c) => c.reference),
                  viewer,
                )
              : null;
          return cases.map((c) =>
            presentRelayCase(c, view, updates ? { ...(updates.get(c.reference) ?? { items: [], more: false }), viewer } : undefined),
          );
        };
        if (query.reference) {
          const { relayCase } = await caseVisibleTo(em, query.reference, agentId, viewer.operator);
          return { case: (await withUpdates([relayCase]))[0] };
        }
        const where: Record<string, unknown> = viewer.operator ? {} : { requesterId: agentId };
        if (query.status) where.status = query.status;
        if (query.kind) where.kind = query.kind;
        if (query.urgency) where.urgency = query.urgency;
        const { items, nextBefore } = await pageBefore(query.before, query.limit, (createdAt, take) =>
          findRows(
            em,
            RelayCase,
            { ...where, ...(createdAt ? { createdAt } : {}) },
            { orderBy: { createdAt: 'desc', reference: 'desc' }, ...(take ? { limit: take } : {}) },
          ),
        );
        return { cases: await withUpdates(items), nextBefore };
      },
    }),
    actions: {
      create: defineAction<CreateCaseParams>({
        summary:
          `Open a case: kind, urgency (default standard), summary (1-${relayLimits.summary}), optional detail (up to ` +
          `${relayLimits.detail}), safetyAcknowledged=true. A retry key is strongly recommended.`,
        params: Joi.object({
          kind: kindRule.required(),
          urgency: urgencyRule.default('standard'),
          summary: Joi.string().trim().min(1).max(relayLimits.summary).required(),
          detail: Joi.string().trim().max(relayLimits.detail).allow(''),
          safetyAcknowledged: flagParam
            .valid(true)
            .required()
            .messages({ 'any.only': 'safetyAcknowledged must be true: acknowledge the relay’s safety notice (see GET /api/relay)' }),
          format: Joi.string().valid('json'),
        }),
        auth: 'agent',
        rateClass: 'relay',
        command: createCase,
        partitionKey: requesterPartition,
        successStatus: [200],
        response: body({ case: relayCaseRecord }),
        errors: mutationErrors,
      }),
      withdraw: defineAction<RequesterStateParams>({
        summary: 'Withdraw your active case (closed: 409).',
        params: ownCaseParams,
        auth: 'agent',
        rateClass: 'relay',
        command: withdrawCase,
        partitionKey: byReference,
        successStatus: [200],
        response: body({ case: relayCaseRecord }),
        errors: [...mutationErrors, 'forbidden', 'not_found', 'conflict'],
      }),
      reopen: defineAction<RequesterStateParams>({
        summary: 'Reopen your closed case; it returns to received (active: 409).',
        params: ownCaseParams,
        auth: 'agent',
        rateClass: 'relay',
        command: reopenCase,
        partitionKey: byReference,
        successStatus: [200],
        response: body({ case: relayCaseRecord }),
        errors: [...mutationErrors, 'forbidden', 'not_found', 'conflict'],
      }),
      transition: defineAction<TransitionCaseParams>({
        summary:
          'Operators only (anyone else: 404): set the case’s status, with an optional body visible to the requester ' +
          '(visibility=agent, default) or to operators only (visibility=operator).',
        params: Joi.object({
          reference: referenceRule.required(),
          status: statusRule.required(),
          body: bodyRule,
          visibility: visibilityRule.default('agent'),
        }),
        auth: 'agent',
        rateClass: 'relay',
        command: transitionCase,
        partitionKey: byReference,
        successStatus: [200],
        response: body({ case: relayCaseRecord, updates: Joi.array().items(relayUpdateRecord) }),
        errors: [...mutationErrors, 'not_found'],
      }),
    },
  });
}
