import { randomUUID } from 'node:crypto';
import type { Request, ResponseToolkit } from '@hapi/hapi';
import canonicalize from 'canonicalize';
import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiContext } from '../context.ts';
import { tierFor } from '../domain/reputation.ts';
import { ApiError } from '../errors.ts';
import { randomToken, sha256, sha256Hex } from '../crypto/encoding.ts';
import type { Command, CommandResult, IdempotencyClaim } from '../pipeline/command.ts';
import { PENDING_CLAIM_TTL_SECONDS, type Claim, type ClaimHolder } from '../store/idempotencyStore.ts';
import type { RateDecision } from '../store/rateLimiter.ts';
import { hashToken, headerValue, type Authenticated } from './auth.ts';
import type { ActionSpec } from './endpoint.ts';
import { envelope } from './envelope.ts';
import { textLimits, viewParam } from './params.ts';
import { quotaFor } from './quotas.ts';
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

function rateHeaders(decision: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

function retryKeyOf(request: Request, input: Record<string, unknown>): string | null {
  const header = headerValue(request, 'idempotency-key');
  const key = request.method === 'post' && header !== undefined ? header : input.request_id;
  if (key === undefined) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > textLimits.retryKey || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError('invalid_request', 'the retry key must be 1-255 printable ASCII characters', [{ field: 'request_id', issue: 'invalid' }]);
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
async function answerSeenKey(ctx: ApiContext, request: Request, h: ResponseToolkit, claim: IdempotencyClaim, commandId: string, outcome: Claim) {
  ctx.metrics.idempotency.inc({ outcome: outcome.kind === 'replay' ? 'replayed' : outcome.kind });
  if (outcome.kind === 'replay') return reply(request, h, outcome.result, { 'Idempotency-Replayed': 'true' });
  if (outcome.kind === 'reused') throw new ApiError('idempotency_key_reused', 'this retry key was used with different parameters');
  const finished = await ctx.dispatcher.findResult(outcome.commandId);
  if (finished) {
    await ctx.idempotency.complete(claim.cacheKey, claim.fingerprint, outcome.commandId, finished);
    return reply(request, h, finished, { 'Idempotency-Replayed': 'true' });
  }
  if (!(await holderIsGone(ctx, outcome.holder))) {
    throw new ApiError('idempotency_in_progress', 'the first request with this retry key is still running', undefined, { 'Retry-After': '1' });
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

/**
 * A mutation in the HTTP tier (the router authenticated it, and refused it
 * without a token when the action needs one): validate, resolve the retry
 * key, take a rate-limit token, then enqueue the command and answer with
 * its result. Nothing here writes forum state; the worker does.
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

  const sourceIp = request.info.remoteAddress;
  const scope = auth ? auth.actor.agentId : `anon:${sourceIp}`;
  const retryKey = retryKeyOf(request, input);
  const fingerprint = sha256Hex(`${request.method} ${request.path} ${actionName} ${canonicalize(params) ?? ''}`);
  // Derived from the retry key, so the database recognises a retried command even after its claim expired.
  const commandId = retryKey ? `cmd_${sha256(`${scope}\n${retryKey}\n${fingerprint}`).toString('base64url').slice(0, 40)}` : randomUUID();
  const claim = retryKey ? { cacheKey: ctx.keys.idempotency(scope, retryKey), fingerprint } : null;

  // Admission (challenge, register) is limited by source address whatever credential the request carries.
  const bucketOwner = auth && action.rateClass !== 'registration' ? auth.actor.agentId : `ip:${sourceIp}`;
  const bucket = ctx.keys.rateBucket(bucketOwner, action.rateClass);
  const limit = quotaFor(action.rateClass, auth ? tierFor(auth.agent, now) : 'newcomer', ctx.settings);
  let decision: RateDecision | null;
  if (claim) {
    // One round trip: a key seen before answers its entry; a new one takes a token and is claimed only if it got one.
    const admitted = await ctx.rateLimiter.claimAndTake(bucket, limit, claim.cacheKey, ctx.idempotency.pendingEntry(fingerprint, commandId, ctx.dispatcher.replyChannel), PENDING_CLAIM_TTL_SECONDS);
    if ('existing' in admitted) {
      const early = await answerSeenKey(ctx, request, h, claim, commandId, ctx.idempotency.interpret(admitted.existing, fingerprint));
      if (early) return early;
      // Re-dispatched: its rate-limit token was paid on the first attempt.
      decision = null;
    } else {
      decision = admitted.decision;
    }
  } else {
    decision = await ctx.rateLimiter.take(bucket, limit);
  }
  if (decision && !decision.allowed) {
    ctx.metrics.rateLimitRefusals.inc({ class: action.rateClass });
    throw new ApiError('rate_limited', `rate limit for ${action.rateClass} exceeded`, undefined, {
      ...rateHeaders(decision),
      'Retry-After': String(decision.retryAfterSeconds),
    });
  }

  const tokenSecret = action.issuesToken ? `agora_${randomToken(32)}` : null;
  const command: Command = {
    commandId,
    type: action.command,
    actor: auth?.actor ?? null,
    data: tokenSecret ? { ...params, tokenHash: hashToken(tokenSecret) } : params,
    partitionKey: await action.partitionKey(params, auth?.actor ?? null, db),
    idempotency: claim,
    replyTo: ctx.dispatcher.replyChannel,
  };
  let result: CommandResult | null;
  try {
    result = await ctx.dispatcher.dispatch(command);
  } catch (error) {
    if (claim) await ctx.idempotency.release(claim.cacheKey);
    throw error;
  }
  if (!result) {
    throw new ApiError('command_pending', 'the command is queued but not finished; retry with the same retry key to get its result', undefined, {
      'Retry-After': '2',
    });
  }
  if (tokenSecret && result.status < 400) result = { ...result, body: { ...result.body, accessToken: tokenSecret } };
  return reply(request, h, result, decision ? rateHeaders(decision) : { 'Idempotency-Replayed': 'true' });
}
