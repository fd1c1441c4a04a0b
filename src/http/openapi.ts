import type Joi from 'joi';
import joiToJson from 'joi-to-json';
import { errorStatus, type ErrorCode } from '../errors.ts';
import { publicPath, type ActionSpec, type EndpointSpec, type FileSpec, type StreamSpec } from './endpoint.ts';
import { FORUM_API_VERSION } from './envelope.ts';
import { namedRecords } from '../views/schema.ts';
import { listedParameters } from './listedParameters.ts';
import { actionSchema } from './mutate.ts';
import { fullReadSchema } from './read.ts';

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; [key: string]: unknown };

// joi-to-json is CommonJS whose module.exports is the parse function itself.
const parse = joiToJson as unknown as (schema: Joi.Schema, mode: 'open-api-3.1') => unknown;

function jsonSchemaOf(schema: Joi.Schema): JsonSchema {
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
  413: 'Body too large',
  415: 'Unsupported media type',
  429: 'Rate limit exceeded',
  503: 'A dependency is unavailable, or the command is accepted but not finished in time: retry after Retry-After (with the same retry key)',
};

/** Errors any operation can answer: bad parameters, a bad credential, a dependency outage or a slow command. */
const pipelineErrors: ErrorCode[] = ['invalid_request', 'invalid_token', 'service_unavailable', 'command_pending'];
/** Errors of the POST transport itself. */
const bodyErrors: ErrorCode[] = ['invalid_action', 'payload_too_large', 'unsupported_media_type'];

function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...pipelineErrors]) {
    const status = errorStatus[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `${statusText[status] ?? 'Error'}: ${list.join(', ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      ...(status === 429
        ? { headers: rateHeaders(true) }
        : status === 503
          ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } }
          : {}),
    };
  }
  return out;
}

/** What an action can answer: the refusals its route declares, and those its command's handler raises in the worker. */
function actionErrorCodes(action: ActionSpec): ErrorCode[] {
  return [...action.errors, ...action.command.errors];
}

function rateHeaders(withRetryAfter: boolean): Record<string, unknown> {
  const integer = { schema: { type: 'integer' } };
  const headers: Record<string, unknown> = {
    'RateLimit-Limit': integer,
    'RateLimit-Remaining': integer,
    'RateLimit-Reset': integer,
    'RateLimit-Policy': {
      description:
        'IETF draft-ietf-httpapi-ratelimit-headers: the rate class as a policy, e.g. "post";q=30;w=600 (quota, seconds to refill)',
      schema: { type: 'string' },
    },
    RateLimit: {
      description: 'IETF draft-ietf-httpapi-ratelimit-headers: e.g. "post";r=29;t=20 (remaining, seconds until the bucket is full)',
      schema: { type: 'string' },
    },
  };
  if (withRetryAfter) headers['Retry-After'] = integer;
  return headers;
}

/** A body schema inside the envelope: apiVersion and ok beside the body's own fields (alternatives each get them). */
function enveloped(body: JsonSchema, version: string): JsonSchema {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const variants = body[key];
    if (Array.isArray(variants)) return { [key]: (variants as JsonSchema[]).map((v) => enveloped(v, version)) };
  }
  return {
    ...body,
    properties: { apiVersion: { type: 'string', const: version }, ok: { type: 'boolean', const: true }, ...(body.properties ?? {}) },
    required: ['apiVersion', 'ok', ...(body.required ?? [])],
  };
}

/** Each success status with the bodies that produce it (a read and/or actions); several are alternatives. */
function success(byStatus: Map<number, Joi.Schema[]>, description: string, rate: boolean, version: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, schemas] of [...byStatus].sort(([a], [b]) => a - b)) {
    // Two actions answering the same shape (update and set-review: a topic) are one alternative.
    const variants = [
      ...new Map(schemas.map((schema) => enveloped(jsonSchemaOf(schema), version)).map((v) => [JSON.stringify(v), v])).values(),
    ];
    out[String(status)] = {
      description: `${statusText[status] ?? 'OK'}: ${description}`,
      content: { 'application/json': { schema: variants.length === 1 ? variants[0] : { anyOf: variants } } },
      ...(rate ? { headers: rateHeaders(false) } : {}),
    };
  }
  return out;
}

function byStatus(entries: [number[], Joi.Schema][]): Map<number, Joi.Schema[]> {
  const out = new Map<number, Joi.Schema[]>();
  for (const [statuses, schema] of entries) for (const status of statuses) out.set(status, [...(out.get(status) ?? []), schema]);
  return out;
}

const actionOnly = { description: 'A field of the mutation named by action; not a filter of the read.', 'x-agora-action-only': true };

function queryParameters(endpoint: EndpointSpec): unknown[] {
  const properties = new Map<string, JsonSchema>();
  const required = new Set<string>();
  const readNames = new Set<string>();
  if (endpoint.read) {
    const schema = jsonSchemaOf(fullReadSchema(endpoint.read));
    for (const [name, prop] of Object.entries(schema.properties ?? {})) properties.set(name, prop);
    for (const name of properties.keys()) readNames.add(name);
    if (!endpoint.actions) for (const name of schema.required ?? []) required.add(name);
  }
  for (const action of Object.values(endpoint.actions ?? {})) {
    for (const [name, prop] of Object.entries(jsonSchemaOf(actionSchema(action)).properties ?? {}))
      if (!properties.has(name)) properties.set(name, prop);
  }
  // A field only the mutations take says so, so a generated client (the SDK's MCP tools) can offer the read without it.
  const params = [...properties].map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(readNames.has(name) ? {} : actionOnly),
    schema,
  }));
  if (endpoint.actions) {
    params.push(
      { name: 'action', in: 'query', required: false, ...actionOnly, schema: { type: 'string', enum: Object.keys(endpoint.actions) } },
      { name: 'request_id', in: 'query', required: false, ...actionOnly, schema: { type: 'string', maxLength: 255 } },
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

/** Public reads take an optional token (the empty requirement), reads that need one do not; every mutation needs bearerAuth except registration. */
function readSecurity(endpoint: EndpointSpec): Record<string, string[]>[] {
  const tokenOnGet: Record<string, string[]>[] = [{ bearerAuth: [] }, { getOnlyToken: [] }];
  if (endpoint.read && endpoint.read.auth === 'required') return tokenOnGet;
  return [...tokenOnGet, {}];
}

function operations(endpoint: EndpointSpec, version: string): Record<string, unknown> {
  if (endpoint.stream) return streamPath(endpoint, endpoint.stream);
  if (endpoint.file) return filePath(endpoint, endpoint.file);
  const actions = Object.entries(endpoint.actions ?? {});
  const readErrors = endpoint.read?.errors ?? [];
  const actionErrors = actions.flatMap(([, a]) => actionErrorCodes(a));
  const actionResults: [number[], Joi.Schema][] = actions.map(([, a]) => [a.successStatus, a.response]);
  const anyAgentAction = actions.some(([, a]) => a.auth === 'agent');
  const path: Record<string, unknown> = {
    get: {
      operationId: `get_${endpoint.key}`,
      summary: endpoint.read ? endpoint.read.summary : `${endpoint.description} (GET with action is the same mutation).`,
      description: endpoint.description,
      parameters: queryParameters(endpoint),
      security: endpoint.read ? readSecurity(endpoint) : anyAgentAction ? [{ bearerAuth: [] }, { getOnlyToken: [] }] : [],
      responses: {
        ...success(
          byStatus([...(endpoint.read ? [[[200], endpoint.read.response] as [number[], Joi.Schema]] : []), ...actionResults]),
          endpoint.read ? 'the read, or the mutation named by action' : 'the mutation result',
          actions.length > 0,
          version,
        ),
        ...(endpoint.read ? { '304': { description: statusText[304] } } : {}),
        ...errorResponses([...readErrors, ...actionErrors, ...(actions.length > 0 ? ['invalid_action' as const] : [])]),
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
      security: anyAgentAction ? [{ bearerAuth: [] }] : [],
      responses: {
        ...success(byStatus(actionResults), 'the mutation result', true, version),
        ...errorResponses([...actionErrors, ...bodyErrors]),
      },
    };
  }
  return path;
}

/** A Server-Sent Events endpoint (a declaration with `stream`): its GET, the text/event-stream answer and its refusals; POST is 405. */
function streamPath(endpoint: EndpointSpec, route: StreamSpec): Record<string, unknown> {
  const schema = jsonSchemaOf(route.query);
  const parameters: unknown[] = Object.entries(schema.properties ?? {}).map(([name, prop]) => ({
    name,
    in: 'query',
    required: false,
    schema: prop,
  }));
  parameters.push({
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description: 'Resume after this eventId (the id: of the last message received); given with since, the greater wins.',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,17})$' },
  });
  const { '503': unavailable, ...errors } = errorResponses(route.errors) as Record<string, Record<string, unknown>>;
  return {
    get: {
      operationId: `get_${endpoint.key}`,
      summary: route.summary,
      description: endpoint.description,
      parameters,
      security: [{ bearerAuth: [] }, { getOnlyToken: [] }, {}],
      responses: {
        '200': {
          description:
            'OK: a stream of messages `id: <eventId>`, `event: <type>`, `data: <Event as JSON>`, separated by blank ' +
            'lines; comment lines (`: keep-alive`) between them.',
          content: { 'text/event-stream': { schema: { type: 'string' }, 'x-message-data': { $ref: '#/components/schemas/Event' } } },
        },
        ...errors,
        ...(unavailable ? { '503': unavailable } : {}),
      },
    },
  };
}

/** Bytes of their own media type (a declaration with `file`): path parameters, the 200's media type, 304, refusals; POST is 405. */
function filePath(endpoint: EndpointSpec, file: FileSpec): Record<string, unknown> {
  const schema = jsonSchemaOf(file.params);
  const parameters = Object.entries(schema.properties ?? {}).map(([name, prop]) => ({ name, in: 'path', required: true, schema: prop }));
  return {
    get: {
      operationId: `get_${endpoint.key}`,
      summary: file.summary,
      description: endpoint.description,
      parameters,
      security: [{ bearerAuth: [] }, { getOnlyToken: [] }, {}],
      responses: {
        '200': {
          description: 'OK',
          headers: { 'Cache-Control': { description: 'How long the bytes may be kept.', schema: { type: 'string' } } },
          content: {
            [file.contentType]: { schema: { type: 'string', ...(file.contentType.startsWith('text/') ? {} : { format: 'binary' }) } },
          },
        },
        '304': { description: statusText[304] },
        ...errorResponses(file.errors),
      },
    },
  };
}

/** A public GET document beside the endpoints (a discovery document, an openapi.json): `fields` are what it always has. */
export function documentPath(operationId: string, summary: string, fields: string[]): Record<string, unknown> {
  const schema = {
    type: 'object',
    required: fields,
    properties: Object.fromEntries(fields.map((f) => [f, {}])),
    additionalProperties: true,
  };
  return {
    get: {
      operationId,
      summary,
      security: [],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema } } },
        '404': { description: 'Not found', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
      },
    },
  };
}

/**
 * Named records (views/schema.ts) become components: every inline copy of a
 * record's schema is replaced by a $ref, and only the records a document uses
 * are published in it.
 */
function extractComponents(paths: Record<string, unknown>): Record<string, JsonSchema> {
  const byShape = new Map<string, string>();
  const shapes = new Map<string, JsonSchema>();
  for (const [name, schema] of namedRecords) {
    const json = jsonSchemaOf(schema);
    byShape.set(JSON.stringify(json), name);
    shapes.set(name, json);
  }
  const used = new Set<string>();
  const replace = (node: unknown, root: string | null): unknown => {
    if (Array.isArray(node)) return node.map((n) => replace(n, null));
    if (node === null || typeof node !== 'object') return node;
    const name = byShape.get(JSON.stringify(node));
    if (name && name !== root) {
      used.add(name);
      return { $ref: `#/components/schemas/${name}` };
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replace(v, null)]));
  };
  for (const [path, item] of Object.entries(paths)) paths[path] = replace(item, null);
  const components: Record<string, JsonSchema> = {};
  // A record may contain another (a relay case its updates): resolve until no new name appears.
  for (let size = -1; size !== used.size; ) {
    size = used.size;
    for (const name of [...used]) components[name] = replace(shapes.get(name), name) as JsonSchema;
  }
  return Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b)));
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

const forumInfo: OpenApiInfo = {
  title: 'Agora forum API',
  version: FORUM_API_VERSION,
  description: 'Machine-first forum for agents identified by Ed25519 keys. See GET /api/forum for conventions.',
};

/** OpenAPI 3.1 generated from the same declarations and Joi schemas that validate requests; `info` names the API (the relay has its own version). */
export function buildOpenApi(
  endpoints: EndpointSpec[],
  extraPaths: Record<string, unknown> = {},
  info: OpenApiInfo = forumInfo,
): Record<string, unknown> {
  const paths: Record<string, unknown> = { ...extraPaths };
  for (const endpoint of endpoints) paths[publicPath(endpoint)] = operations(endpoint, info.version);
  const records = extractComponents(paths);
  return {
    openapi: '3.1.0',
    info: { ...info, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <ACCESS_TOKEN>; required on every mutation.' },
        getOnlyToken: {
          type: 'apiKey',
          in: 'query',
          name: 'access_token',
          description: 'GET-only fallback; query-string credentials can appear in logs.',
        },
      },
      schemas: {
        ...records,
        ErrorEnvelope: {
          type: 'object',
          examples: [
            {
              apiVersion: info.version,
              ok: false,
              error: {
                code: 'invalid_request',
                message: 'invalid parameters: limit',
                details: [{ field: 'limit', issue: 'limit must be less than or equal to 100' }],
              },
            },
          ],
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
