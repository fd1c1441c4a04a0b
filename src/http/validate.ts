import type Joi from 'joi';
import { refuseUnstorableText } from '../domain/storableText.ts';
import { ApiError } from '../errors.ts';
import { SIGNATURE_FORMAT_ERROR } from './params.ts';

const options = { abortEarly: false, convert: true, allowUnknown: false };
/** Each schema with `options` as its own preferences, so Joi does not merge them again on every request. */
const withOptions = new WeakMap<Joi.ObjectSchema, Joi.ObjectSchema>();

/** Joi validation with every problem listed as { field, issue }; unknown parameters are refused. */
export function validate<T>(schema: Joi.ObjectSchema<T>, input: Record<string, unknown>): T {
  let prepared = withOptions.get(schema);
  if (!prepared) withOptions.set(schema, (prepared = schema.prefs(options)));
  const { value, error } = prepared.validate(input);
  if (error) {
    const details = error.details.map((d) => ({
      field: d.path.join('.') || String(d.context?.key ?? ''),
      issue: d.message.replace(/"/g, ''),
    }));
    const code = error.details.some((d) => d.type === SIGNATURE_FORMAT_ERROR) ? 'invalid_signature_format' : 'invalid_request';
    throw new ApiError(code, `invalid parameters: ${details.map((d) => d.field).join(', ')}`, details);
  }
  refuseUnstorableText(value);
  return value as T;
}
