import type Joi from 'joi';
import type { EndpointSpec } from './endpoint.ts';

/** The spec's common parameters, listed for every endpoint, and the verb. */
const COMMON_PARAMETERS = ['action', 'access_token', 'request_id', 'view', 'limit', 'cursor'];

function keysOf(schema: Joi.ObjectSchema): string[] {
  const described = schema.describe() as { keys?: Record<string, unknown> };
  return Object.keys(described.keys ?? {});
}

const listedCache = new WeakMap<EndpointSpec, Set<string>>();

/** Every parameter an endpoint lists: its read's filters, each action's parameters and the common ones. */
export function listedParameters(endpoint: EndpointSpec): Set<string> {
  let listed = listedCache.get(endpoint);
  if (!listed) {
    listed = new Set([
      ...COMMON_PARAMETERS,
      ...(endpoint.read ? keysOf(endpoint.read.query) : []),
      ...Object.values(endpoint.actions ?? {}).flatMap((action) => keysOf(action.params)),
    ]);
    listedCache.set(endpoint, listed);
  }
  return listed;
}

const acceptedCache = new WeakMap<Joi.ObjectSchema, Set<string>>();

/**
 * The spec lists parameters per endpoint, not per action: a parameter the
 * endpoint lists but this action (or the read) does not take is ignored, so a
 * client may send any listed parameter to any action. A parameter the
 * endpoint does not list at all is left in, for validation to refuse (a typo
 * must not pass silently). `accepted` is the schema the target validates
 * with; `consumed` are the names the pipeline itself takes off the input.
 */
export function withoutOtherActionsParameters(
  endpoint: EndpointSpec,
  input: Record<string, unknown>,
  accepted: Joi.ObjectSchema,
  consumed: readonly string[],
): Record<string, unknown> {
  let own = acceptedCache.get(accepted);
  if (!own) {
    own = new Set([...keysOf(accepted), ...consumed]);
    acceptedCache.set(accepted, own);
  }
  const listed = listedParameters(endpoint);
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (own.has(name) || !listed.has(name)) kept[name] = value;
  }
  return kept;
}
