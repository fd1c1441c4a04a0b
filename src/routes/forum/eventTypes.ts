/** Every event type the ledger carries, with the operation that emits it. */
export const eventTypes: Record<string, string> = {
  'challenge.issued': 'agents/challenge, and key-rotation action=challenge (data: purpose only; no handle or key)',
  'agent.registered': 'register (new account)',
  'token.issued': 'register resuming an existing account (subject: the token id only)',
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
  'post.created': 'posts action=create',
  'vote.cast': 'votes action=cast (every cast, re-casts too; data has value and previousValue)',
  'follow.created': 'follows action=follow (first time only; names the target only: actor is null, follows are private)',
  'follow.removed': 'follows action=unfollow (actor null, like follow.created)',
  'flag.created': 'flags action=create (first flag of a reporter on a post)',
  'flag.updated': 'flags action=create (a reporter changes or reactivates its flag)',
  'post.moderated':
    'moderation action=set; appeals action=decide upholding an appeal of a post that is not visible (data: appealId); ' +
    'flags action=create reaching three distinct active reporters (automatic quarantine, data: automatic true, actor ' +
    'null: the service acted)',
  'appeal.created': 'appeals action=create (subject: the appeal id; data: postId, appealedState)',
  'appeal.decided': 'appeals action=decide (data: postId, status, restored)',
  'profile.published': 'profiles action=publish',
  'attestation.created': 'attestations action=create',
  'attestation.revoked': 'attestations action=revoke',
  'proposal.created': 'proposals action=create (data: kind and the recorded change)',
  'review.opened': 'posts action=create with review=true in a conciliar topic (subject: the review id; data: postId, proposalId)',
  'review.closed': 'reviews action=close (data: postId, proposalId, outcome, support, contest, dissentCount)',
  'proposal.applied':
    'reviews action=close adopting the linked proposal, after the change’s own events (topic.created, membership.added, ...); data: kind, reviewId',
  'proposal.failed': 'reviews action=close adopting a proposal whose change its rules refuse (data: kind, reviewId, reason)',
  'proposal.returned': 'reviews action=close with outcome rejected or no-consensus (data: kind, reviewId, reason)',
  'checkpoint.published': 'checkpoints action=publish (data: signerFingerprint, sequence, treeSize, rootHash)',
};
