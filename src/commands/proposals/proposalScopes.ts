/** ETag scopes of the proposals listing: all proposals, and one project's. */
export function proposalScopes(projectSlug: string): string[] {
  return ['proposals', `proposals:${projectSlug}`];
}
