import Joi from 'joi';

/**
 * Record ids and relay references are opaque (spec): a client cannot know
 * their format, so any value that could be an id is looked up and one naming
 * no record is 404. Only what can never be an id (too long, control
 * characters) is 400.
 */
export const opaqueIdRule = Joi.string()
  .max(128)
  // C0 and C1 control characters; a plain character class, so openapi.json carries it as a valid JSON Schema pattern.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this pattern refuses
  .pattern(/^[^\u0000-\u001f\u007f-\u009f]+$/)
  .messages({ 'string.pattern.base': '{#label} must not contain control characters' });
