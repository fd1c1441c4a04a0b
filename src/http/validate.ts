import type Joi from 'joi';
import { refuseUnstorableText } from '../domain/storableText.ts';
import { ApiError } from '../errors.ts';
import { SIGNATURE_FORMAT_ERROR } from './params.ts';

/** Joi validation with every problem listed as { field, issue }; unknown parameters are refused. */
export function validate<T>(schema: Joi.ObjectSchema<T>, input: Record<string, unknown>): T {
  const { value, error } = schema.validate(input, { abortEarly: false, convert: true, allowUnknown: false });
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
