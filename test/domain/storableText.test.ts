import { describe, expect, it } from 'vitest';
import { refuseUnstorableText, unstorableTextFields } from '../../src/domain/storableText.ts';
import { ApiError } from '../../src/errors.ts';

const LONE_SURROGATE = '\uD800';

describe('unstorable text fields', () => {
  it('finds nothing in text Postgres can hold, emoji included', () => {
    expect(unstorableTextFields({ body: 'plain text 😀', tags: ['a', 'b'], count: 3, flag: true, none: null })).toEqual([]);
  });

  it('names a string containing U+0000 by its path', () => {
    expect(unstorableTextFields({ body: 'a\u0000b' })).toEqual(['body']);
  });

  it('names a string containing an unpaired UTF-16 surrogate by its path', () => {
    expect(unstorableTextFields({ body: `a${LONE_SURROGATE}b` })).toEqual(['body']);
  });

  it('names nested fields with dotted paths and array items by index', () => {
    expect(unstorableTextFields({ change: { items: ['fine', 'bad\u0000'] } })).toEqual(['change.items.1']);
  });

  it('checks object keys as well as values', () => {
    expect(unstorableTextFields({ 'key\u0000': 'fine' })).toEqual(['key\u0000']);
  });

  it('puts the given prefix in front of every path', () => {
    expect(unstorableTextFields({ body: '\u0000' }, 'payload')).toEqual(['payload.body']);
  });

  it('names a bad top-level string by the prefix alone', () => {
    expect(unstorableTextFields('\u0000', 'detail')).toEqual(['detail']);
  });

  it('skips numbers, booleans and null', () => {
    expect(unstorableTextFields([1, false, null])).toEqual([]);
  });
});

describe('refusing unstorable text', () => {
  it('accepts values without unstorable text', () => {
    expect(() => refuseUnstorableText({ body: 'fine' })).not.toThrow();
  });

  it('names the bad fields by their own paths when no prefix is given', () => {
    expect(() => refuseUnstorableText({ title: 'a\u0000' })).toThrow('invalid parameters: title');
  });

  it('refuses with a 400 naming every bad field', () => {
    let error: unknown;
    try {
      refuseUnstorableText({ title: 'a\u0000', items: [LONE_SURROGATE] }, 'params');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe('invalid_request');
    expect(apiError.message).toBe('invalid parameters: params.title, params.items.0');
    expect(apiError.details).toEqual([
      { field: 'params.title', issue: 'contains a NUL character or an unpaired UTF-16 surrogate' },
      { field: 'params.items.0', issue: 'contains a NUL character or an unpaired UTF-16 surrogate' },
    ]);
  });
});
