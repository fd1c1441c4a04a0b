import { randomUUID } from 'node:crypto';
import type { Request, ResponseToolkit } from '@hapi/hapi';
import canonicalize from 'canonicalize';
import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiContext } from './context.ts';
import { tierFor } from '../domain/reputation.ts';
import { ApiError } from '../errors.ts';
import { randomToken, sha256, sha256Hex } from '../crypto/encoding.ts';
import type { Command, CommandResult } from '../pipeline/command.ts';
import type { View } from '../views/view.ts';
import type { RetryKeyClaim } from '../store/admission.ts';
import type { Claim, ClaimHolder } from '../store/idempotencyStore.ts';
import type { RateDecision } from '../store/rateLimiter.ts';
import { hashToken, headerValue, type Authenticated } from './auth.ts';
import type { ActionSpec } from './endpoint.ts';
import { envelope } from './envelope.ts';
import { textLimits, viewParam } from './params.ts';
import { baseQuotas, quotaFor, type RateClass } from './quotas.ts';
import { rateLimitFields } from './rateLimitFields.ts';
import { validate } from './validate.ts';

const schemaCache = new WeakMap<ActionSpec, Joi.ObjectSchema>();

/** The action's parameters plus `view`, which shapes the record a mutation answers with. */
export function actionSchema(action: ActionSpec): Joi.ObjectSchema {
  let schema = schemaCache.get(action);
  if (!schema) {
    schema = action.params.keys({ view: viewParam });
    schemaCache.set(action, schema);
  }
  return schema;
}

function rateHeaders(rateClass: RateClass, decision: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
    ...rateLimitFields({
      policy: rateClass,
      quota: decision.limit,
      windowSeconds: baseQuotas[rateClass].refillSeconds,
      remaining: decision.remaining,
      resetSeconds: decision.resetSeconds,
    }),
  };
}

function retryKeyOf(request: Request, input: Record<string, unknown>): string | null {
  const header = headerValue(request, 'idempotency-key');
  const key = request.method === 'post' && header !== undefined ? header : input.request_id;
  if (key === undefined) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > textLimits.retryKey || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError('invalid_request', 'the retry key must be 1-255 printable ASCII characters', [
      { field: 'request_id', issue: 'invalid' },
    ]);
  }
  return key;
}

function reply(request: Request, h: ResponseToolkit, result: CommandResult, headers: Record<string, string>) {
  const response = h.response(envelope(request.path, result.status < 400, result.body)).code(result.status);
  for (const [name, value] of Object.entries(headers)) response.header(name, value);
  return response;
}

/**
 * A pending retry key is abandoned when the API instance that claimed it no
 * longer listens for results (it died), or has stopped waiting (it answered
 * 503 command_pending, or failed before enqueueing).
 */
async function holderIsGone(ctx: ApiContext, holder: ClaimHolder | null): Promise<boolean> {
  if (!holder) return false;
  if (Date.now() - holder.claimedAt > ctx.settings.commandTimeoutMs + 1000) return true;
  return !(await ctx.idempotency.holderListens(holder));
}

/**
 * A retry key seen before: replay its result, refuse a reuse or a running
 * first attempt, or (null) take over an abandoned claim so the caller sends
 * the command again, under the same id, so it still applies once.
 */
async function answerSeenKey(
  ctx: ApiContext,
  request: Request,
  h: ResponseToolkit,
  claim: RetryKeyClaim,
  commandId: string,
  outcome: Claim,
  actorAgentId: string | null,
) {
  ctx.metrics.idempotency.inc({ outcome: outcome.kind === 'replay' ? 'replayed' : outcome.kind });
  if (outcome.kind === 'replay') return reply(request, h, outcome.result, { 'Idempotency-Replayed': 'true' });
  if (outcome.kind === 'reused') throw new ApiError('idempotency_key_reused', 'this retry key was used with different parameters');
  const finished = await ctx.dispatcher.findResult(outcome.commandId, actorAgentId);
  if (finished) {
    await ctx.idempotency.complete(claim.cacheKey, claim.fingerprint, outcome.commandId, finished);
    return reply(request, h, finished, { 'Idempotency-Replayed': 'true' });
  }
  if (!(await holderIsGone(ctx, outcome.holder))) {
    throw new ApiError('idempotency_in_progress', 'the first request with this retry key is still running', undefined, {
      'Retry-After': '1',
    });
  }
  await ctx.idempotency.takeOver(claim.cacheKey, claim.fingerprint, commandId, ctx.dispatcher.replyChannel);
  return null;
}

/** What the router settled before the mutation or read runs: the credential (checked first), a lazy EntityManager, the clock. */
export interface RequestScope {
  auth: Authenticated | null;
  db: () => EntityManager;
  now: Date;
}

/** Fields the mutation pipeline takes off the input itself: the verb, the GET credential and the GET retry key. */
export const MUTATION_CONSUMED = ['action', 'access_token', 'request_id'] as const;

/** What a mutation is, derived from the request alone: whose it is, its retry key and its command id. */
interface Identity {
  /** The agent, or the source address of an anonymous request: the retry key's scope. */
  scope: string;
  /** The bucket its rate-limit token comes from. */
  bucket: string;
  commandId: string;
  claim: RetryKeyClaim | null;
}

function identify(
  ctx: ApiContext,
  request: Request,
  actionName: string,
  action: ActionSpec,
  params: Record<string, unknown>,
  input: Record<string, unknown>,
  auth: Authenticated | null,
): Identity {
  const anonymous = `anon:${request.info.remoteAddress}`;
  const scope = auth ? auth.actor.agentId : anonymous;
  const retryKey = retryKeyOf(request, input);
  const fingerprint = sha256Hex(`${request.method} ${request.path} ${actionName} ${canonicalize(params) ?? ''}`);
  // Derived from the retry key, so the database recognises a retried command even after its claim expired.
  const commandId = retryKey ? `cmd_${sha256(`${scope}\n${retryKey}\n${fingerprint}`).toString('base64url').slice(0, 40)}` : randomUUID();
  // Admission (challenge, register) is limited by source address whatever credential the request carries.
  const bucketOwner = action.rateClass === 'registration' ? anonymous : scope;
  return {
    scope,
    bucket: ctx.keys.rateBucket(bucketOwner, action.rateClass),
    commandId,
    claim: retryKey
      ? { cacheKey: ctx.keys.idempotency(scope, retryKey, bucketOwner), fingerprint, commandId, replyTo: ctx.dispatcher.replyChannel }
      : null,
  };
}

/**
 * The rate-limit token and the retry-key claim, in one Redis call: the rate
 * decision (null for a re-dispatch, whose token the first attempt paid), or
 * the early answer to a key seen before.
 */
async function admit(
  ctx: ApiContext,
  request: Request,
  h: ResponseToolkit,
  action: ActionSpec,
  identity: Identity,
  auth: Authenticated | null,
  now: Date,
) {
  const limit = quotaFor(action.rateClass, auth ? tierFor(auth.agent, now) : 'newcomer', ctx.settings);
  if (!identity.claim) return { decision: await ctx.admission.take(identity.bucket, limit) };
  const admitted = await ctx.admission.claimAndTake(identity.bucket, limit, identity.claim);
  if ('decision' in admitted) return admitted;
  const early = await answerSeenKey(ctx, request, h, identity.claim, identity.commandId, admitted.seen, auth?.actor.agentId ?? null);
  return early ? { early } : { decision: null };
}

function refuseOverLimit(ctx: ApiContext, action: ActionSpec, decision: RateDecision): ApiError {
  ctx.metrics.rateLimitRefusals.inc({ class: action.rateClass });
  return new ApiError('rate_limited', `rate limit for ${action.rateClass} exceeded`, undefined, {
    ...rateHeaders(action.rateClass, decision),
    'Retry-After': String(decision.retryAfterSeconds),
  });
}

/**
 * Builds the command (its partition may need a Postgres lookup), enqueues it and waits for its result. A key whose
 * command never left is freed, so that a retry once Postgres or Redis is back is applied at once rather than told
 * for COMMAND_TIMEOUT_MS that its first attempt is still running; one still running answers 503 command_pending.
 */
async function dispatch(
  ctx: ApiContext,
  claim: RetryKeyClaim | null,
  requestedAt: Date,
  build: () => Promise<Command>,
): Promise<CommandResult> {
  let result: CommandResult | null;
  try {
    result = await ctx.dispatcher.dispatch(await build());
  } catch (error) {
    // Given up before a retry may take the claim over (commandTimeoutMs + 1 s after it was made, after the request began).
    if (claim) await ctx.idempotency.release(claim.cacheKey, requestedAt.getTime() + ctx.settings.commandTimeoutMs);
    throw error;
  }
  if (!result) {
    throw new ApiError(
      'command_pending',
      'the command is queued but not finished; retry with the same retry key to get its result',
      undefined,
      {
        'Retry-After': '2',
      },
    );
  }
  return result;
}

/**
 * A mutation in the HTTP tier (the router authenticated it, and refused it
 * without a token when the action needs one), step by step: validate,
 * identify, admit (rate limit and retry key), build the command, dispatch it,
 * answer with its result. Nothing here writes forum state; the worker does.
 */
export async function runMutation(
  ctx: ApiContext,
  request: Request,
  h: ResponseToolkit,
  actionName: string,
  action: ActionSpec,
  input: Record<string, unknown>,
  { auth, db, now }: RequestScope,
) {
  const { action: _action, access_token: _token, request_id: _requestId, ...fields } = input;
  const params = validate(actionSchema(action), fields) as Record<string, unknown>;
  const identity = identify(ctx, request, actionName, action, params, input, auth);
  const admitted = await admit(ctx, request, h, action, identity, auth, now);
  if ('early' in admitted) return admitted.early;
  const { decision } = admitted;
  if (decision && !decision.allowed) throw refuseOverLimit(ctx, action, decision);

  // The secret of a token this action issues never crosses the queue: the command carries its hash,
  // and the secret joins only this response, below (a security property, not a rendering step).
  const tokenSecret = action.issuesToken ? `agora_${randomToken(32)}` : null;
  // `view` rides beside the data, not in it; the retry-key fingerprint above still covers it.
  const { view, ...data } = params;
  const result = await dispatch(ctx, identity.claim, now, async () => ({
    commandId: identity.commandId,
    type: action.command.type,
    actor: auth?.actor ?? null,
    data: tokenSecret ? { ...data, tokenHash: hashToken(tokenSecret) } : data,
    view: view as View,
    partitionKey: await action.partitionKey(params, auth?.actor ?? null, db),
    idempotency: identity.claim ? { cacheKey: identity.claim.cacheKey, fingerprint: identity.claim.fingerprint } : null,
    replyTo: ctx.dispatcher.replyChannel,
    repliesTogether: true,
  }));
  const answered = tokenSecret && result.status < 400 ? { ...result, body: { ...result.body, accessToken: tokenSecret } } : result;
  return reply(request, h, answered, decision ? rateHeaders(action.rateClass, decision) : { 'Idempotency-Replayed': 'true' });
}
