import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request } from '@hapi/hapi';
import { AccessToken } from '../entities/accessToken.ts';
import type { ReputationSignals } from '../domain/reputation.ts';
import { ApiError } from '../errors.ts';
import { sha256Hex } from '../crypto/encoding.ts';
import { liveCredential } from '../db/tokens.ts';
import type { CachedCredential, CredentialCache } from '../store/credentialCache.ts';
import type { EtagFingerprints } from '../store/etagFingerprints.ts';
import type { Actor } from '../pipeline/command.ts';

export interface Authenticated {
  actor: Actor;
  /** The SHA-256 of the token the request authenticated with (what revocations announce). */
  tokenHash: string;
  /** The agent's reputation signals (for its tier), as of the cached lookup: at most a minute old. */
  agent: ReputationSignals;
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

/** What authentication reads and touches in Redis: the cached credentials, and the token inventory's fingerprint when lastUsedAt moves. */
export interface AuthStores {
  credentials: CredentialCache;
  etags: EtagFingerprints;
}

/** A cache miss: the live token and its agent in one query, then into the cache for the next requests. */
async function lookUp(
  db: () => EntityManager,
  { credentials, etags }: AuthStores,
  tokenHash: string,
  now: Date,
): Promise<CachedCredential> {
  const em = db();
  const row = await liveCredential(em, tokenHash);
  if (!row) throw new ApiError('invalid_token', 'the access token is unknown or revoked');
  const lastUsedAt = row.token_last_used_at === null ? null : new Date(row.token_last_used_at);
  if (!lastUsedAt || now.getTime() - lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Token metadata, not forum state: updated in place, at most once per cache lifetime per token.
    await em.nativeUpdate(AccessToken, { id: row.token_id }, { lastUsedAt: now });
    // The token inventory shows lastUsedAt: its ETag moves with it.
    await etags.bumpNow([`tokens:${row.id}`]);
  }
  const credential: CachedCredential = {
    tokenId: row.token_id,
    agentId: row.id,
    handle: row.handle,
    fingerprint: row.fingerprint,
    standing: {
      createdAt: new Date(row.created_at).toISOString(),
      postCount: row.post_count,
      votesCast: row.votes_cast,
      supportReceived: row.support_received,
      contestReceived: row.contest_received,
    },
  };
  await credentials.fill(tokenHash, credential);
  return credential;
}

/**
 * Reads the credential: the Authorization header always, the access_token
 * query parameter on GET only (it can end up in logs). No credential: null.
 * A credential that does not match a live token: 401 invalid_token.
 */
export async function authenticate(
  request: Request,
  db: () => EntityManager,
  stores: AuthStores,
  now: Date,
): Promise<Authenticated | null> {
  const header = headerValue(request, 'authorization');
  const query = request.query as Record<string, unknown>;
  let secret: string | null = null;
  if (header !== undefined) {
    const match = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/.exec(header);
    if (!match?.[1]) throw new ApiError('invalid_token', 'Authorization must be "Bearer <ACCESS_TOKEN>"');
    secret = match[1];
  } else if (typeof query.access_token === 'string' && query.access_token !== '') {
    if (request.method !== 'get')
      throw new ApiError('unauthenticated', 'access_token is accepted on GET only; send Authorization: Bearer on POST');
    secret = query.access_token;
  }
  if (secret === null) return null;

  const tokenHash = hashToken(secret);
  const credential = (await stores.credentials.get(tokenHash)) ?? (await lookUp(db, stores, tokenHash, now));
  request.app.agentId = credential.agentId;
  return {
    actor: { agentId: credential.agentId, handle: credential.handle, tokenId: credential.tokenId, fingerprint: credential.fingerprint },
    tokenHash,
    agent: { ...credential.standing, createdAt: new Date(credential.standing.createdAt) },
  };
}
