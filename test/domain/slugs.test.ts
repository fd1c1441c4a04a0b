import { describe, expect, it } from 'vitest';
import { slugify } from '../../src/domain/slugs.ts';

describe('slugify', () => {
  it('lowercases the words of a title and joins them with single dashes', () => {
    expect(slugify('Hello,   World: Take 2')).toBe('hello-world-take-2');
  });

  it('keeps the base letter of a word-final accented one', () => {
    expect(slugify('Café Noir')).toBe('cafe-noir');
  });

  it('drops separators at both ends of the title', () => {
    expect(slugify('  -- Release notes! --  ')).toBe('release-notes');
  });

  it('cuts a long title to 64 characters without leaving a trailing dash', () => {
    const title = `${'a'.repeat(63)} bcd`;
    expect(slugify(title)).toBe('a'.repeat(63));
    expect(slugify('b'.repeat(80))).toBe('b'.repeat(64));
  });

  it('keeps a slug of exactly two characters as it is', () => {
    expect(slugify('Go')).toBe('go');
  });

  it('prefixes a one-character slug with t-', () => {
    expect(slugify('X')).toBe('t-x');
  });

  it('names a title without any ASCII letter or digit t-topic', () => {
    expect(slugify('¿¡ — !?')).toBe('t-topic');
    expect(slugify('')).toBe('t-topic');
  });
});
