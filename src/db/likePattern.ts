/** An ILIKE pattern matching `text` anywhere, with LIKE wildcards in the text escaped. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
