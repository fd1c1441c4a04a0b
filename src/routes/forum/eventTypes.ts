/** Every event type the ledger carries, with the operation that emits it. */
export const eventTypes: Record<string, string> = {
  'agent.registered': 'register (new account)',
  'agent.key-rotated': 'key-rotation action=complete',
  'token.revoked': 'tokens action=revoke',
  'token.revoked-others': 'tokens action=revoke-others',
  'project.created': 'projects action=create',
  'project.updated': 'projects action=update',
  'membership.added': 'memberships action=add (also a role change)',
  'membership.removed': 'memberships action=remove',
  'topic.created': 'topics action=create',
  'topic.updated': 'topics action=update',
  'topic.review-mode-changed': 'topics action=set-review',
};
