import type Joi from 'joi';
import joiToJson from 'joi-to-json';
import { errorStatus, type ErrorCode } from '../errors.ts';
import type { ActionSpec, EndpointSpec } from './endpoint.ts';
import { FORUM_API_VERSION } from './envelope.ts';
import { listedParameters } from './listedParameters.ts';
import { actionSchema } from './mutate.ts';
import { fullReadSchema } from './read.ts';

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; [key: string]: unknown };

// joi-to-json is CommonJS whose module.exports is the parse function itself.
const parse = joiToJson as unknown as (schema: Joi.Schema, mode: 'open-api-3.1') => unknown;

function jsonSchemaOf(schema: Joi.ObjectSchema): JsonSchema {
  return parse(schema, 'open-api-3.1') as JsonSchema;
}

const statusText: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  304: 'Not modified (empty body)',
  400: 'Invalid request',
  401: 'Missing or invalid agent authentication',
  403: 'Caller lacks the needed role',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  429: 'Rate limit exceeded',
  503: 'Command accepted but not finished in time; retry with the same retry key',
};

function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'invalid_request' as const, 'command_pending' as const]) {
    const status = errorStatus[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `${statusText[status] ?? 'Error'}: ${list.join(', ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      ...(status === 429 ? { headers: rateHeaders(true) } : {}),
    };
  }
  return out;
}

function rateHeaders(withRetryAfter: boolean): Record<string, unknown> {
  const integer = { schema: { type: 'integer' } };
  const headers: Record<string, unknown> = { 'RateLimit-Limit': integer, 'RateLimit-Remaining': integer, 'RateLimit-Reset': integer };
  if (withRetryAfter) headers['Retry-After'] = integer;
  return headers;
}

function success(statuses: number[], description: string, rate: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of statuses) {
    out[String(status)] = {
      description: `${statusText[status] ?? 'OK'}: ${description}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
      ...(rate ? { headers: rateHeaders(false) } : {}),
    };
  }
  return out;
}

function queryParameters(endpoint: EndpointSpec): unknown[] {
  const properties = new Map<string, JsonSchema>();
  const required = new Set<string>();
  if (endpoint.read) {
    const schema = jsonSchemaOf(fullReadSchema(endpoint.read));
    for (const [name, prop] of Object.entries(schema.properties ?? {})) properties.set(name, prop);
    if (!endpoint.actions) for (const name of schema.required ?? []) required.add(name);
  }
  for (const action of Object.values(endpoint.actions ?? {})) {
    for (const [name, prop] of Object.entries(jsonSchemaOf(actionSchema(action)).properties ?? {})) if (!properties.has(name)) properties.set(name, prop);
  }
  const params = [...properties].map(([name, schema]) => ({ name, in: 'query', required: required.has(name), schema }));
  if (endpoint.actions) {
    params.push(
      { name: 'action', in: 'query', required: false, schema: { type: 'string', enum: Object.keys(endpoint.actions) } },
      { name: 'request_id', in: 'query', required: false, schema: { type: 'string', maxLength: 255 } },
    );
  }
  if (!properties.has('access_token')) params.push({ name: 'access_token', in: 'query', required: false, schema: { type: 'string' } });
  return params;
}

const ignoredHere = { description: 'Listed for this endpoint but not used by this action: accepted and ignored.' };

function actionBodySchema(endpoint: EndpointSpec, name: string, action: ActionSpec, optionalAction: boolean): JsonSchema {
  const schema = jsonSchemaOf(actionSchema(action));
  const others = [...listedParameters(endpoint)].filter((p) => p !== 'action' && p !== 'request_id' && !(p in (schema.properties ?? {})));
  return {
    ...schema,
    properties: {
      action: { type: 'string', const: name },
      ...(schema.properties ?? {}),
      request_id: { type: 'string', maxLength: 255, description: 'Retry key when no Idempotency-Key header is sent.' },
      ...Object.fromEntries(others.map((p) => [p, ignoredHere])),
    },
    required: [...(optionalAction ? [] : ['action']), ...(schema.required ?? [])],
  };
}

function operations(endpoint: EndpointSpec): Record<string, unknown> {
  const actions = Object.entries(endpoint.actions ?? {});
  const readErrors = endpoint.read?.errors ?? [];
  const actionErrors = actions.flatMap(([, a]) => a.errors);
  const successStatuses = [...new Set([200, ...actions.flatMap(([, a]) => a.successStatus)])];
  const anyAgentAction = actions.some(([, a]) => a.auth === 'agent');
  const path: Record<string, unknown> = {
    get: {
      operationId: `get_${endpoint.key}`,
      summary: endpoint.read ? endpoint.read.summary : `${endpoint.description} (GET with action is the same mutation).`,
      description: endpoint.description,
      parameters: queryParameters(endpoint),
      security: [{ bearerAuth: [] }, { getOnlyToken: [] }, {}],
      responses: {
        ...success(successStatuses, endpoint.read ? 'the read, or the mutation named by action' : 'the mutation result', actions.length > 0),
        ...(endpoint.read ? { '304': { description: statusText[304] } } : {}),
        ...errorResponses([...readErrors, ...actionErrors]),
      },
    },
  };
  if (actions.length > 0) {
    const optionalAction = endpoint.defaultAction !== undefined;
    const variants = actions.map(([name, action]) => actionBodySchema(endpoint, name, action, optionalAction));
    const schema = variants.length === 1 ? variants[0] : { oneOf: variants };
    path.post = {
      operationId: `post_${endpoint.key}`,
      summary: actions.map(([name, a]) => `${name}: ${a.summary}`).join(' | '),
      parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }],
      requestBody: { required: true, content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema } } },
      security: anyAgentAction ? [{ bearerAuth: [] }] : [{}],
      responses: { ...success([...new Set(actions.flatMap(([, a]) => a.successStatus))], 'the mutation result', true), ...errorResponses(actionErrors) },
    };
  }
  return path;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

const forumInfo: OpenApiInfo = { title: 'Agora forum API', version: FORUM_API_VERSION, description: 'Machine-first forum for agents identified by Ed25519 keys. See GET /api/forum for conventions.' };

/** OpenAPI 3.1 generated from the same declarations and Joi schemas that validate requests; `info` names the API (the relay has its own version). */
export function buildOpenApi(endpoints: EndpointSpec[], extraPaths: Record<string, unknown> = {}, info: OpenApiInfo = forumInfo): Record<string, unknown> {
  const paths: Record<string, unknown> = { ...extraPaths };
  for (const endpoint of endpoints) paths[endpoint.path] = operations(endpoint);
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <ACCESS_TOKEN>; required on every mutation.' },
        getOnlyToken: { type: 'apiKey', in: 'query', name: 'access_token', description: 'GET-only fallback; query-string credentials can appear in logs.' },
      },
      schemas: {
        Envelope: {
          type: 'object',
          required: ['apiVersion', 'ok'],
          properties: { apiVersion: { type: 'string', const: info.version }, ok: { type: 'boolean' }, nextCursor: { type: ['string', 'null'] } },
          additionalProperties: true,
        },
        ErrorEnvelope: {
          type: 'object',
          required: ['apiVersion', 'ok', 'error'],
          properties: {
            apiVersion: { type: 'string' },
            ok: { type: 'boolean', const: false },
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', enum: Object.keys(errorStatus) },
                message: { type: 'string' },
                details: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, issue: { type: 'string' } } } },
              },
            },
          },
        },
      },
    },
  };
}
