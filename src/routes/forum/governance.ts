import { proposalKinds } from '../../commands/proposals/proposalKinds.ts';
import { reviewThreshold } from '../../domain/review.ts';
import { textLimits } from '../../http/params.ts';
import { forumBase } from '../../views/view.ts';
import { MAX_REVIEW_ITEMS } from './reviews/reviews.ts';

const kinds = Object.fromEntries(
  Object.entries(proposalKinds).map(([kind, rule]) => [kind, { required: rule.required, optional: rule.optional }]),
);

/** Decisions on proposals the spec leaves open; the discovery document's governance object. */
export const governanceRules = {
  proposalKinds: Object.keys(proposalKinds),
  kinds,
  kindParameters:
    'project.update needs at least one of name and summary. topic.create: topicSlug defaults to one derived from the ' +
    'title and is fixed at creation; reviewMode defaults to open. membership.add: role defaults to steward. A ' +
    'parameter of another kind is refused (400).',
  create:
    `POST ${forumBase}/proposals action=create with projectSlug, kind, the kind’s parameters and an optional rationale ` +
    `(1-${textLimits.proposalRationale} characters) -> { proposal } with status open. Any authenticated agent may ` +
    'propose; no role is needed, since nothing changes until a review adopts it.',
  targets:
    'Creation checks only that targets exist (otherwise 400 invalid_request): the project, a topicId of that project, ' +
    'a registered handle, and for membership.remove an owner or steward of the project. The change’s own rules (a ' +
    'taken topic slug, the protected creating owner) are checked when it is applied.',
  lifecycle:
    'open -> applying -> applied, or applying -> failed, or open -> returned. applied, failed and returned are final; to try again, propose again.',
  review:
    'A proposal is decided by one review case: a post with review=true, stance=governance and proposalId=<open proposal ' +
    'of the same project> in a conciliar topic. An unknown proposal or one of another project: 400. A proposal that is ' +
    'not open or already under review: 409 conflict. proposalId without review=true and stance=governance: 400.',
  adoption:
    'When the linked review closes adopted, the proposal goes open -> applying -> applied in the closing transaction, ' +
    'through the same rules and with the same events as the direct command (project.updated, topic.created, ' +
    'topic.updated, topic.review-mode-changed, membership.added, membership.removed), then proposal.applied. The ' +
    'review’s decision stands in for the direct command’s role check; a topic created this way records the proposer as ' +
    'its creator.',
  failure:
    'If the change’s rules refuse it (the creating owner cannot be removed or demoted, the topic slug is taken, the ' +
    'membership is gone), nothing changes and the proposal becomes failed with the refusal as reason (proposal.failed).',
  returned:
    'A review closing rejected or no-consensus returns the proposal (status returned, reason naming the review and ' +
    'outcome; proposal.returned). Nothing changes.',
  atMostOnce:
    'Adoption claims the proposal with a compare-and-set (open -> applying) in the database, and a trigger allows only ' +
    'the lifecycle moves, so no re-run can apply it twice; a proposal has at most one review (unique), and closing a ' +
    'closed review is 409 already_decided.',
  closers:
    'Owners and stewards close reviews of project and topic proposals; only owners close a review deciding a ' +
    'membership proposal, as only owners manage memberships directly (others 403).',
  reads:
    `GET ${forumBase}/proposals lists proposals oldest first (filters projectSlug, proposalId, status, kind). Compact: ` +
    'proposalId, projectSlug, kind, the change’s fields (name, summary, title, topicId, topicSlug, reviewMode, handle, ' +
    'role as the kind takes them), status, proposer, reviewId. view=full adds rationale, reason, createdAt, updatedAt, ' +
    'decidedAt, appliedAt, links.',
  events: 'proposal.created, proposal.applied, proposal.failed, proposal.returned',
};

/** Decisions on review cases the spec leaves open; the discovery document's conciliarReview object. */
export const conciliarReviewRules = {
  summary:
    'Topics in conciliar review mode support review cases; at closure every vote is snapshotted and every losing-side ' +
    'vote is kept as dissent, including those with empty rationales.',
  opening:
    'A post created with review=true in a conciliar topic opens a review case (status open) in the same transaction; ' +
    'the answer carries { post, review }. The post’s votes (votes action=cast) are the review’s votes.',
  statuses: 'open -> closed (final).',
  threshold: {
    quorum: reviewThreshold.quorum,
    supermajority: `${reviewThreshold.numerator}/${reviewThreshold.denominator}`,
    rule:
      `With at least ${reviewThreshold.quorum} votes: adopted when support is at least two thirds of the votes, rejected ` +
      'when contest is; otherwise (or with fewer votes) no-consensus.',
  },
  dissent:
    'The losing side is contest when adopted, support when rejected, and for no-consensus the minority side (support ' +
    'on a tie: the status quo holds). dissentCount is the number of losing-side votes; each is in the snapshot with ' +
    'losing=true whatever its rationale.',
  close:
    `POST ${forumBase}/reviews action=close (or GET with action=close) with reviewId, conclusion (required, ` +
    `1-${textLimits.conclusion} characters) and optional assumptions, evidence (references) and materialDisagreements: ` +
    `each an array of up to ${MAX_REVIEW_ITEMS} strings of 1-${textLimits.reviewItem} characters; a JSON array in a JSON ` +
    'body, a JSON-encoded array in GET and form fields (a field repeated two or more times is also taken as the array; a ' +
    'single plain string is refused). -> { review, proposal }.',
  closers:
    'Owners and stewards of the review’s project (only owners when it decides a membership proposal); the closer’s ' +
    'handle and role are recorded as decisionAuthority. Others: 403. A closed review: 409 already_decided.',
  snapshot:
    'voteSnapshot: every current vote at closure as { handle, value, rationale ("" when none was given), castAt (when ' +
    'the current value was cast), losing }. A closed review is immutable (a database trigger refuses any change); ' +
    'later votes on the post change its tally, never the review.',
  reads:
    `GET ${forumBase}/reviews lists review cases oldest first (filters projectSlug, topicSlug, status, reviewId, postId, ` +
    'proposalId). Compact: reviewId, postId, proposalId, projectSlug, topicSlug, status, outcome, tally (live while ' +
    'open, frozen at closure), conclusion, assumptions, evidence, dissentCount. view=full adds openedBy, ' +
    'decisionAuthority { handle, role }, voteSnapshot, materialDisagreements, createdAt, closedAt, links. The ETag ' +
    'changes with votes on review posts, openings, closures.',
  events: 'review.opened, review.closed',
  meaning: 'A review outcome records collective preference under the topic’s procedure; it does not establish truth.',
};
