import type { Request, ResponseToolkit } from '@hapi/hapi';
import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Authenticated } from './auth.ts';
import type { ApiContext } from './context.ts';
import type { ErrorCode } from '../errors.ts';
import type { CommandHandler } from '../commands/types.ts';
import type { Actor, IssuedToken } from '../pipeline/command.ts';
import type { View } from '../views/view.ts';
import type { RateClass } from './quotas.ts';

/** What a read's handler gets: its validated filters, the caller (if any), the view and a fresh EntityManager. */
interface ReadContext<Q> {
  query: Q;
  actor: Actor | null;
  view: View;
  em: EntityManager;
  now: Date;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds reads of every query type; defineRead<Q> keeps each one typed
export interface ReadSpec<Q = any> {
  summary: string;
  /** Filters of the read; common parameters (view, limit, cursor, access_token) are added by the router. */
  query: Joi.ObjectSchema<Q>;
  auth: 'none' | 'optional' | 'required';
  /** True when `followed=true` (or similar) makes an otherwise public read need a token. */
  requiresAuth?: (query: Q) => boolean;
  paginated: boolean;
  /** Read scopes whose fingerprints make up the ETag. */
  etagScopes: (query: Q, actor: Actor | null) => string[];
  /**
   * True when the body depends on which of the caller's tokens made the
   * request (the token inventory marks it `current`): the ETag then names the
   * token, not only its agent, and the rendered-read cache keeps one body per token.
   */
  perToken?: boolean;
  /**
   * True for a body that can never change again (a ledger page with a page
   * after it: the ledger only grows at its end). It must not depend on the
   * caller. Its ETag is then its bytes' own, the same on every instance
   * forever, `Cache-Control` says immutable, and it is kept by its path and
   * parameters and answered again without fingerprints or Postgres.
   */
  immutable?: (query: Q, body: Record<string, unknown>) => boolean;
  /**
   * For a listing that only grows at its end (oldest first, by ids that
   * increase in commit order): the scopes that move when a row already
   * written changes, or null for a query whose new rows can land anywhere.
   * A page with a page after it (nextCursor not null) keeps its body while
   * rows are only added, so its ETag hashes these scopes alone and stays
   * the same under appends.
   */
  settledBy?: (query: Q, actor: Actor | null) => string[] | null;
  /**
   * Runs before the ETag is computed, so a 304 cannot skip it; what it
   * returns is hashed into the ETag. For reads whose state is cheaper to read
   * from Postgres than to track in Redis (the event ledger's head), or that
   * must do work even when the answer would be 304 (outbox reconciliation).
   * `now` is the clock the handler will use, for state that moves with time.
   */
  freshness?: (ctx: ApiContext, query: Q, actor: Actor | null, now: Date) => Promise<string>;
  /** The body of the response without the envelope. */
  handler: (ctx: ReadContext<Q>) => Promise<Record<string, unknown>>;
  /** The shape of what handler returns (views/schema.ts): openapi.json's 200 and the tests' check of every response. */
  response: Joi.Schema;
  errors: ErrorCode[];
}

interface ActionFields<P> {
  summary: string;
  params: Joi.ObjectSchema<P>;
  /** Registration needs no token; every other mutation does. */
  auth: 'agent' | 'anonymous';
  rateClass: RateClass;
  /** Project slug, or agent/handle for commands outside a project. */
  partitionKey: (params: P, actor: Actor | null, db: () => EntityManager) => string | Promise<string>;
  successStatus: number[];
  /** The shape of a successful result's body without the envelope (views/schema.ts). */
  response: Joi.Schema;
  /** What the HTTP tier refuses the action with; openapi.json adds the command's own (CommandHandler.errors). */
  errors: ErrorCode[];
}

/**
 * A mutation and the handler a worker runs it with (src/commands): the
 * command crosses the queue as its type, and the handler takes exactly the
 * validated params (`view` travels beside them, as Command.view).
 */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds actions of every parameter type; defineAction<P> keeps each one typed
export type ActionSpec<P = any> = ActionFields<P> &
  (
    | { command: CommandHandler<P>; issuesToken?: false }
    | {
        command: CommandHandler<P & IssuedToken>;
        /** The HTTP tier mints a bearer token: its hash goes to the command, the secret only to this response. */
        issuesToken: true;
      }
  );

/**
 * A Server-Sent Events read: its query validated and its caller
 * authenticated by the router like every read's, then `open` holds the
 * response open (src/http/sse.ts) and answers hapi with h.abandon. POST is 405.
 */
// biome-ignore lint/suspicious/noExplicitAny: as ReadSpec
export interface StreamSpec<Q = any> {
  summary: string;
  /** Its parameters, access_token included (openapi.json lists them all). */
  query: Joi.ObjectSchema<Q>;
  auth: 'optional';
  /** True when the query needs a token (followed=true). */
  requiresAuth: (query: Q) => boolean;
  /** The class whose concurrent quota bounds one agent's (or source address's) open streams, on every instance together. */
  rateClass: 'stream';
  errors: ErrorCode[];
  open: (ctx: ApiContext, request: Request, h: ResponseToolkit, query: Q, auth: Authenticated | null) => Promise<unknown>;
}

/**
 * A public read answered with bytes of its own media type instead of the
 * JSON envelope (a C2SP tile or signed note): its path parameters validated
 * after the credential like every read's, an ETag of the bytes themselves,
 * refusals still the contract's error body. POST is 405.
 */
// biome-ignore lint/suspicious/noExplicitAny: as ReadSpec
export interface FileSpec<P = any> {
  summary: string;
  /** Path parameters: `{name}` in the path, `{name*}` for the rest of it. */
  params: Joi.ObjectSchema<P>;
  /** The media type of a 200. */
  contentType: string;
  errors: ErrorCode[];
  /** The bytes and how long they may be kept (Cache-Control). */
  handler: (ctx: { params: P; em: EntityManager }) => Promise<{ body: Buffer; cacheControl: string }>;
}

/**
 * One declaration per endpoint drives request validation, authentication,
 * rate limiting, the command it becomes, and its openapi.json entry.
 */
export interface EndpointSpec {
  /** Key in the discovery document's endpoints map. */
  key: string;
  path: string;
  description: string;
  read?: ReadSpec;
  /** A stream instead of a read (no actions then). */
  stream?: StreamSpec;
  /** Bytes instead of a read (no actions then). */
  file?: FileSpec;
  actions?: Record<string, ActionSpec>;
  /** The action taken when none is given (challenge and register are mutations without a verb). */
  defaultAction?: string;
  /** Set when the deployment lacks what the endpoint needs: every request then answers 503 service_unavailable with this message. */
  unavailable?: string;
}

/** An endpoint's path as clients and openapi.json write it: hapi's `{name*}` (the rest of the path) is one `{name}` parameter. */
export function publicPath(endpoint: EndpointSpec): string {
  return endpoint.path.replace('*}', '}');
}

/** The discovery document's endpoints map, from the declarations: a new endpoint is listed by being declared. */
export function endpointPaths(endpoints: readonly EndpointSpec[]): Record<string, string> {
  return Object.fromEntries(endpoints.map((endpoint) => [endpoint.key, publicPath(endpoint)]));
}

export function defineEndpoint(spec: EndpointSpec): EndpointSpec {
  return spec;
}

export function defineAction<P>(spec: ActionSpec<P>): ActionSpec<P> {
  return spec;
}

export function defineRead<Q>(spec: ReadSpec<Q>): ReadSpec<Q> {
  return spec;
}

export function defineFile<P>(spec: FileSpec<P>): FileSpec<P> {
  return spec;
}
