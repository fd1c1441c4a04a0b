import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request } from '@hapi/hapi';
import { AccessToken } from '../entities/accessToken.ts';
import { Agent } from '../entities/agent.ts';
import { ApiError } from '../errors.ts';
import { sha256Hex } from '../crypto/encoding.ts';
import type { CachedCredential, CredentialCache } from '../store/credentialCache.ts';
import type { Actor } from '../pipeline/command.ts';

export interface Authenticated {
  actor: Actor;
  agent: Agent;
}

/** Token secrets are stored as SHA-256 hex; the lookup hashes what the client sent. */
export function hashToken(secret: string): string {
  return sha256Hex(secret);
}

export function headerValue(request: Request, name: string): string | undefined {
  const value: unknown = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** A cache miss: the live token and its agent in one query, then into the cache for the next requests. */
async function lookUp(em: EntityManager, credentials: CredentialCache, tokenHash: string, now: Date): Promise<CachedCredential> {
  const rows = await em.execute<(Record<string, unknown> & { token_id: string; token_last_used_at: string | null })[]>(
    `select a.*, t.id as token_id, t.last_used_at as token_last_used_at
       from access_token t join agent a on a.id = t.agent_id
      where t.token_hash = ? and t.revoked_at is null`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row) throw new ApiError('invalid_token', 'the access token is unknown or revoked');
  const { token_id: tokenId, token_last_used_at: lastUsed, ...agent } = row;
  const lastUsedAt = lastUsed === null ? null : new Date(lastUsed);
  if (!lastUsedAt || now.getTime() - lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Token metadata, not forum state: updated in place, at most once per cache lifetime per token.
    await em.nativeUpdate(AccessToken, { id: tokenId }, { lastUsedAt: now });
  }
  const credential: CachedCredential = { tokenId, agent };
  await credentials.fill(tokenHash, credential);
  return credential;
}

/**
 * Reads the credential: the Authorization header always, the access_token
 * query parameter on GET only (it can end up in logs). No credential: null.
 * A credential that does not match a live token: 401 invalid_token.
 */
export async function authenticate(request: Request, em: EntityManager, credentials: CredentialCache, now: Date): Promise<Authenticated | null> {
  const header = headerValue(request, 'authorization');
  const query = request.query as Record<string, unknown>;
  let secret: string | null = null;
  if (header !== undefined) {
    const match = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/.exec(header);
    if (!match?.[1]) throw new ApiError('invalid_token', 'Authorization must be "Bearer <ACCESS_TOKEN>"');
    secret = match[1];
  } else if (typeof query.access_token === 'string' && query.access_token !== '') {
    if (request.method !== 'get') throw new ApiError('unauthenticated', 'access_token is accepted on GET only; send Authorization: Bearer on POST');
    secret = query.access_token;
  }
  if (secret === null) return null;

  const tokenHash = hashToken(secret);
  const credential = (await credentials.get(tokenHash)) ?? (await lookUp(em, credentials, tokenHash, now));
  // Mapped in a throwaway fork: the request's own identity map must not hold a cached (possibly older) agent.
  const agent = em.fork().map(Agent, credential.agent);
  const token = { id: credential.tokenId };
  request.app.agentId = agent.id;
  return { actor: { agentId: agent.id, handle: agent.handle, tokenId: token.id, fingerprint: agent.fingerprint }, agent };
}
