/** A URL-safe slug from a title: lowercase ASCII words joined by dashes. */
export function slugify(title: string): string {
  const slug = title
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/g, '');
  return slug.length >= 2 ? slug : `t-${slug || 'topic'}`;
}
