import Joi from 'joi';

/**
 * Response shapes, declared beside the presenters that produce them: the
 * endpoint declarations compose them into each operation's response, which
 * drives openapi.json (and so the SDK's types) and the tests' check of every
 * real response.
 */
export const text = () => Joi.string().allow('');
export const nullableText = () => Joi.string().allow('', null);
export const timestamp = () => Joi.string().isoDate();
export const nullableTimestamp = () => Joi.string().isoDate().allow(null);
export const integer = () => Joi.number().integer();
export const oneOf = (values: readonly string[]) => Joi.string().valid(...values);
/** Resource links by name; an open map (joi-to-json does not carry .pattern() into openapi.json). */
export const links = () => Joi.object().unknown(true).description('Resource links by name: relative URLs, or null');
export const tally = () => Joi.object({ support: integer().required(), contest: integer().required() });

type Shape = Record<string, Joi.Schema>;

/** Records published as named components of openapi.json (and so as named types of the SDK). */
export const namedRecords = new Map<string, Joi.Schema>();

export function named<T extends Joi.Schema>(name: string, schema: T): T {
  namedRecords.set(name, schema);
  return schema;
}

/** A record: compact fields always present, full-view fields present only with view=full. */
export function record(compact: Shape, full: Shape = {}): Joi.ObjectSchema {
  const keys: Shape = {};
  // A field declared .optional() (a response part only some results carry) stays optional.
  for (const [name, schema] of Object.entries(compact))
    keys[name] = schema.$_getFlag('presence') === 'optional' ? schema : schema.required();
  for (const [name, schema] of Object.entries(full)) keys[name] = schema.optional();
  return Joi.object(keys);
}

/** A response body (without the envelope) whose fields are all present. */
export function body(shape: Shape): Joi.ObjectSchema {
  return record(shape);
}

/** A list response: the records under their plural name, and nextCursor (null on the last page). */
export function list(plural: string, item: Joi.Schema): Joi.ObjectSchema {
  return body({ [plural]: Joi.array().items(item), nextCursor: Joi.string().allow(null) });
}

/** The `signing` block every prepare of a signed action answers with (contract.md, Signed actions). */
export const signingBlock = () => body({ payload: Joi.string(), envelope: Joi.string(), message: Joi.string(), expiresAt: timestamp() });
