import { raw } from '@mikro-orm/core';

/** An ILIKE pattern matching `text` anywhere, with LIKE wildcards in the text escaped. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A searched column: its entity property and its SQL name (the grams index names the column). */
export interface SearchedColumn {
  property: string;
  column: string;
}

/** Whether `q` is too short to hold a trigram (one or two characters): the grams index (m0014SearchShortTerms) serves it. */
export function isShortTerm(q: string): boolean {
  return [...q].length <= 2;
}

/** The expression m0014SearchShortTerms indexes: every one- and two-character piece of the columns, lower-cased. */
export function gramsExpression(columns: readonly string[]): string {
  return `(${columns.map((column) => `search_grams("${column}")`).join(' || ')})`;
}

/**
 * Where a search by `q` matches any part of any column, ignoring case. Three
 * characters or more are served by the columns' trigram indexes (m0012); one
 * or two hold no trigram, so the match also asks for the term among the
 * columns' indexed one- and two-character pieces, which a GIN index answers
 * (the ILIKE still decides). Without it such a search read the whole table:
 * 5.4 s of Postgres for a rare two-character term at 10^6 agents.
 */
export function searchFilter(columns: readonly SearchedColumn[], q: string): Record<string, unknown> {
  const like = likePattern(q);
  const matches = { $or: columns.map(({ property }) => ({ [property]: { $ilike: like } })) };
  if (!isShortTerm(q)) return matches;
  const grams = gramsExpression(columns.map(({ column }) => column));
  return { $and: [matches, { [raw(`${grams} @> array[lower(?)]`, [q])]: [] }] };
}
