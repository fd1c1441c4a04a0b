import type { Request, ResponseToolkit } from '@hapi/hapi';
import canonicalize from 'canonicalize';
import type { EntityManager } from '@mikro-orm/postgresql';
import Joi from 'joi';
import type { ApiContext } from './context.ts';
import { ageDays } from '../domain/reputation.ts';
import { ApiError } from '../errors.ts';
import { sha256 } from '../crypto/encoding.ts';
import { latestPosition } from '../store/commitPositions.ts';
import type { View } from '../views/view.ts';
import { headerValue } from './auth.ts';
import type { ReadSpec } from './endpoint.ts';
import type { RequestScope } from './mutate.ts';
import { envelope } from './envelope.ts';
import type { Rendered } from './renderedReads.ts';
import { cursorParam, limitParam, viewParam } from './params.ts';
import { validate } from './validate.ts';

const schemaCache = new WeakMap<ReadSpec, Joi.ObjectSchema>();

/** The read's own filters plus the common parameters every read takes. */
export function fullReadSchema(read: ReadSpec): Joi.ObjectSchema {
  let schema = schemaCache.get(read);
  if (!schema) {
    schema = read.query.keys({ view: viewParam, access_token: Joi.string().max(200) });
    if (read.paginated) schema = schema.keys({ limit: limitParam, cursor: cursorParam });
    schemaCache.set(read, schema);
  }
  return schema;
}

/** Polls repeat the same query string: their validated parameters are remembered per read (bounded, oldest out). */
const REMEMBERED_QUERIES = 1000;
const validatedQueries = new WeakMap<Joi.ObjectSchema, Map<string, Record<string, unknown>>>();

/**
 * `validate`, remembered for an input seen before (query strings only hold
 * strings: JSON is an exact key). A query carrying access_token is never
 * remembered: no token secret outlives its request.
 */
function validateQuery(schema: Joi.ObjectSchema, input: Record<string, unknown>): Record<string, unknown> {
  if (input.access_token !== undefined) return validate(schema, input) as Record<string, unknown>;
  let seen = validatedQueries.get(schema);
  if (!seen) validatedQueries.set(schema, (seen = new Map()));
  const key = JSON.stringify(input);
  let value = seen.get(key);
  if (!value) {
    value = validate(schema, input) as Record<string, unknown>;
    if (seen.size >= REMEMBERED_QUERIES) seen.delete(seen.keys().next().value as string);
    seen.set(key, value);
  }
  return { ...value };
}

/**
 * hapi sends a compressed answer's ETag with the encoding appended
 * (`"abc-gzip"`), and clients send that back: it names the same state.
 */
export function ifNoneMatchIncludes(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some(
    (candidate) =>
      candidate
        .trim()
        .replace(/^W\//, '')
        .replace(/-(gzip|deflate)"$/, '"') === etag,
  );
}

/** How a 200 or 304 may be kept: revalidated every time, or (a body that can never change) kept for a year. */
const REVALIDATE = 'private, no-cache';
const IMMUTABLE = 'public, max-age=31536000, immutable';

const etagOf = (text: string) => `"${sha256(text).toString('base64url').slice(0, 27)}"`;

/**
 * A read: validate, authenticate, answer 304 from Redis fingerprints when
 * the client's ETag still matches, otherwise query and answer with a fresh ETag.
 *
 * A body its read declares immutable (a ledger page with a page after it)
 * gets an ETag of its own bytes, the same on every instance forever, and is
 * kept by its path and parameters: asked again, it is answered (or 304) with
 * no fingerprint, ledger head or Postgres at all.
 */
export async function runRead(
  ctx: ApiContext,
  request: Request,
  h: ResponseToolkit,
  read: ReadSpec,
  input: Record<string, unknown>,
  { auth, db, now }: RequestScope,
) {
  const query = validateQuery(fullReadSchema(read), input) as Record<string, unknown> & { view: View };
  const needsAuth = read.auth === 'required' || (read.requiresAuth?.(query) ?? false);
  if (needsAuth && !auth) throw new ApiError('unauthenticated', 'this read needs an agent token');
  const actor = read.auth === 'none' && !needsAuth ? null : (auth?.actor ?? null);

  const { access_token: _token, ...keyed } = query;
  const address = `${request.path}|${canonicalize(keyed) ?? ''}`;
  const ifNoneMatch = headerValue(request, 'if-none-match');
  const kept = read.immutable ? ctx.renderedReads.lookup([address])?.rendered : undefined;
  if (kept?.etag) return answer(ctx, request, h, { key: address, rendered: kept, etag: kept.etag, cacheControl: IMMUTABLE }, ifNoneMatch);

  // A settled page's scopes are read beside the ETag's own; issued together, so auto-pipelining sends them in one write.
  const scopes = read.etagScopes(query, actor);
  const settledScopes = read.settledBy?.(query, actor) ?? null;
  const [fingerprintsRead, fresh, ownPosition] = await Promise.all([
    ctx.etags.read(settledScopes ? [...scopes, ...settledScopes] : scopes),
    read.freshness ? read.freshness(ctx, query, actor, now).then((f) => [f]) : [],
    auth && ctx.replicas.enabled ? ctx.positions.of(auth.actor.agentId) : 0n,
  ]);
  const scoped = fingerprintsRead.slice(0, scopes.length);
  const fingerprints = [...scoped, ...fresh];
  // The actor's whole days of age move its score and tier, so they are part of every authenticated ETag.
  const caller = read.perToken && actor ? `${actor.agentId}/${actor.tokenId}` : (actor?.agentId ?? '-');
  const standing = auth ? `${caller}:${Math.floor(ageDays(auth.agent.createdAt, now))}` : '-';
  const etag = etagOf(`${address}|${standing}|${fingerprints.join(',')}`);
  if (ifNoneMatchIncludes(ifNoneMatch, etag)) return h.response().code(304).etag(etag.slice(1, -1)).header('Cache-Control', REVALIDATE);
  // Kept only for a page seen with a page after it: then the body is the same for as long as these fingerprints are.
  const settledEtag = settledScopes && etagOf(`${address}|${standing}|settled|${fingerprintsRead.slice(scopes.length).join(',')}`);
  const found = ctx.renderedReads.lookup(settledEtag ? [settledEtag, etag] : [etag]);
  if (found)
    return answer(ctx, request, h, { key: found.key, rendered: found.rendered, etag: found.key, cacheControl: REVALIDATE }, ifNoneMatch);

  const handle = (em: EntityManager) => read.handler({ query, actor, view: query.view, em, now });
  // Reads that miss together on one ETag (a listing that just moved, asked by many clients at once) share one render.
  const rendered = await ctx.renderedReads.once(etag, async (): Promise<Answer> => {
    // A replica serves the body only once past the reader's own last commit and the commits behind its ETag (src/db/replicas.ts),
    // the settled scopes' included: a body kept under a settled ETag outlives the other scopes' next moves.
    // A freshness fingerprint (ledger head, tree size, ages) carries no commit position, so those reads stay on the primary.
    const body = read.freshness ? await handle(db()) : await ctx.replicas.read(latestPosition(ownPosition, fingerprintsRead), db, handle);
    const bytes = Buffer.from(JSON.stringify(envelope(request.path, true, body)));
    if (read.immutable?.(query, body)) {
      const final = { body: bytes, etag: etagOf(`${address}|${bytes.toString('base64')}`) };
      ctx.renderedReads.set(address, final);
      return { key: address, rendered: final, etag: final.etag, cacheControl: IMMUTABLE };
    }
    const key = settledEtag && body.nextCursor != null ? settledEtag : etag;
    const rendering = { body: bytes };
    ctx.renderedReads.set(key, rendering);
    return { key, rendered: rendering, etag: key, cacheControl: REVALIDATE };
  });
  return answer(ctx, request, h, rendered, ifNoneMatch);
}

interface Answer {
  /** What the rendered-read cache keeps it by. */
  key: string;
  rendered: Rendered;
  etag: string;
  cacheControl: string;
}

/**
 * 304 when the client holds `etag` already, else the rendered body (what hapi would compress,
 * compressed once: same Content-Encoding, Vary and "-gzip" ETag as hapi's own).
 */
function answer(
  ctx: ApiContext,
  request: Request,
  h: ResponseToolkit,
  { key, rendered, etag, cacheControl }: Answer,
  ifNoneMatch: string | undefined,
) {
  if (ifNoneMatchIncludes(ifNoneMatch, etag)) return h.response().code(304).etag(etag.slice(1, -1)).header('Cache-Control', cacheControl);
  const respond = (bytes: Buffer) =>
    h.response(bytes).type('application/json; charset=utf-8').etag(etag.slice(1, -1)).header('Cache-Control', cacheControl);
  if (request.info.acceptEncoding === 'gzip' && rendered.body.length >= compressionMinBytes(request)) {
    return respond(ctx.renderedReads.gzipped(key, rendered)).compressed('gzip').vary('accept-encoding');
  }
  return respond(rendered.body);
}

/** The size below which the server leaves answers uncompressed (hapi's compression.minBytes). */
function compressionMinBytes(request: Request): number {
  const { compression } = request.server.settings;
  if (compression === false) return Number.POSITIVE_INFINITY;
  return (typeof compression === 'object' ? compression.minBytes : undefined) ?? 1024;
}
