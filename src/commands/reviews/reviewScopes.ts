/**
 * ETag scopes of the reviews listing: all reviews, and one project's. The
 * listing also shows live tallies, so it depends on the post scopes votes touch.
 */
export function reviewScopes(projectSlug: string): string[] {
  return ['reviews', `reviews:${projectSlug}`];
}
