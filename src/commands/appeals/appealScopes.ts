/** ETag scopes of the appeals listing: all appeals, and one post's. */
export function appealScopes(postId: string): string[] {
  return ['appeals', `appeals:${postId}`];
}
