import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiContext } from './context.ts';
import { ApiError } from '../errors.ts';
import type { EndpointSpec, FileSpec, StreamSpec } from './endpoint.ts';
import { validate } from './validate.ts';
import { authenticate } from './auth.ts';
import { withoutOtherActionsParameters } from './listedParameters.ts';
import { actionSchema, MUTATION_CONSUMED, runMutation, type RequestScope } from './mutate.ts';
import { fullReadSchema, ifNoneMatchIncludes, runRead } from './read.ts';
import { sha256 } from '../crypto/encoding.ts';
import { headerValue } from './auth.ts';

function fieldsOf(request: Request): Record<string, unknown> {
  const query = { ...(request.query as Record<string, unknown>) };
  if (request.method !== 'post') return query;
  const payload = request.payload;
  if (payload === null || payload === undefined || (typeof payload === 'string' && payload === '')) return query;
  if (typeof payload !== 'object' || Array.isArray(payload) || Buffer.isBuffer(payload)) {
    throw new ApiError('invalid_request', 'the body must be a JSON object or form fields');
  }
  const body = payload as Record<string, unknown>;
  if (body.action !== undefined && query.action !== undefined && body.action !== query.action) {
    throw new ApiError('invalid_action', 'action differs between the query string and the body');
  }
  return { ...query, ...body };
}

/** Registration and the challenge are the only mutations without a token. */
function everyActionNeedsAgent(endpoint: EndpointSpec): boolean {
  return Object.values(endpoint.actions ?? {}).every((action) => action.auth === 'agent');
}

function tokenNeeded(): ApiError {
  return new ApiError('unauthenticated', 'this mutation needs an agent token (Authorization: Bearer, or access_token on GET)');
}

/**
 * Authentication comes before anything else is judged: an invalid token is
 * 401 whatever the request holds, and so is a mutation without a token on an
 * endpoint whose every action needs one (even one with a bad action or body).
 */
async function authenticateFirst(
  ctx: ApiContext,
  endpoint: EndpointSpec,
  request: Request,
  scope: Omit<RequestScope, 'auth'>,
  mutation: boolean,
): Promise<RequestScope> {
  const auth = await authenticate(request, scope.db, ctx, scope.now);
  if (!auth && mutation && everyActionNeedsAgent(endpoint)) throw tokenNeeded();
  return { ...scope, auth };
}

function newScope(ctx: ApiContext): Omit<RequestScope, 'auth'> {
  // Most requests never touch Postgres in this tier (cached tokens, partitions from the parameters, 304s): fork only on demand.
  let em: EntityManager | null = null;
  return { now: new Date(), db: () => (em ??= ctx.orm.em.fork()) };
}

/**
 * Sends GET and POST of an endpoint to the read or to the action the request
 * names. A GET without action is a read and never changes anything.
 */
async function dispatchRequest(ctx: ApiContext, endpoint: EndpointSpec, request: Request, h: ResponseToolkit) {
  if (endpoint.unavailable) throw new ApiError('service_unavailable', endpoint.unavailable);
  if (endpoint.stream) return openStream(ctx, endpoint.stream, request, h);
  if (endpoint.file) return serveFile(ctx, endpoint.file, request, h);
  const namedInQuery = (request.query as Record<string, unknown>).action;
  const mutation = request.method === 'post' || (namedInQuery !== undefined && namedInQuery !== '') || endpoint.defaultAction !== undefined;
  const scope = await authenticateFirst(ctx, endpoint, request, newScope(ctx), mutation);
  const input = fieldsOf(request);
  const named = input.action;
  if (named !== undefined && typeof named !== 'string') throw new ApiError('invalid_action', 'action must be a string');
  const actionName = named || endpoint.defaultAction;
  if (actionName) {
    // Own keys only: an action named like an Object.prototype member (constructor, __proto__) is unknown, not a crash.
    const action = endpoint.actions && Object.hasOwn(endpoint.actions, actionName) ? endpoint.actions[actionName] : undefined;
    if (!action) {
      const known = Object.keys(endpoint.actions ?? {}).join(', ') || 'none';
      throw new ApiError('invalid_action', `unknown action "${actionName}" for ${endpoint.path}; known: ${known}`);
    }
    // An endpoint with anonymous actions too (account links) knows only now whether a token is needed.
    if (action.auth === 'agent' && !scope.auth) throw tokenNeeded();
    const fields = withoutOtherActionsParameters(endpoint, input, actionSchema(action), MUTATION_CONSUMED);
    return runMutation(ctx, request, h, actionName, action, fields, scope);
  }
  if (request.method === 'post' || !endpoint.read) {
    throw new ApiError('invalid_action', `${endpoint.path} needs an action: ${Object.keys(endpoint.actions ?? {}).join(', ')}`);
  }
  return runRead(ctx, request, h, endpoint.read, withoutOtherActionsParameters(endpoint, input, fullReadSchema(endpoint.read), []), scope);
}

/** A stream: authentication first, then its parameters, then it holds the response open. */
async function openStream(ctx: ApiContext, stream: StreamSpec, request: Request, h: ResponseToolkit) {
  const scope = newScope(ctx);
  const auth = await authenticate(request, scope.db, ctx, scope.now);
  const query = validate(stream.query, { ...(request.query as Record<string, unknown>) }) as Record<string, unknown>;
  if (stream.requiresAuth(query) && !auth) throw new ApiError('unauthenticated', 'this stream needs an agent token');
  return stream.open(ctx, request, h, query, auth);
}

/** Bytes: authentication first (a bad token is 401 here too), then the path's parameters; an ETag of the bytes, 304 when held. */
async function serveFile(ctx: ApiContext, file: FileSpec, request: Request, h: ResponseToolkit) {
  const scope = newScope(ctx);
  await authenticate(request, scope.db, ctx, scope.now);
  const params = validate(file.params, { ...request.params }) as Record<string, unknown>;
  const { body, cacheControl } = await file.handler({ params, em: scope.db() });
  const etag = `"${sha256(body).toString('base64url').slice(0, 27)}"`;
  const reply = ifNoneMatchIncludes(headerValue(request, 'if-none-match'), etag)
    ? h.response().code(304)
    : h.response(body).type(file.contentType);
  return reply.etag(etag.slice(1, -1)).header('Cache-Control', cacheControl);
}

export function registerEndpoints(server: Server, ctx: ApiContext, endpoints: EndpointSpec[]): void {
  for (const endpoint of endpoints) {
    const handler = (request: Request, h: ResponseToolkit) => dispatchRequest(ctx, endpoint, request, h);
    server.route({ method: 'GET', path: endpoint.path, handler });
    if (!endpoint.actions) {
      server.route({
        method: 'POST',
        path: endpoint.path,
        handler: () => {
          throw new ApiError('method_not_allowed', `${endpoint.path} is read-only; use GET`);
        },
      });
    } else {
      server.route({
        method: 'POST',
        path: endpoint.path,
        handler,
        options: {
          payload: {
            parse: true,
            allow: ['application/json', 'application/x-www-form-urlencoded'],
            maxBytes: ctx.settings.maxBodyBytes,
            // A body hapi cannot parse is judged after the credential, like every other parameter.
            failAction: async (request, _h, error) => {
              await authenticateFirst(ctx, endpoint, request, newScope(ctx), true);
              throw error ?? new ApiError('invalid_request', 'the body could not be parsed');
            },
          },
        },
      });
    }
  }
}
