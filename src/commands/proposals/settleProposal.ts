import { Project } from '../../entities/project.ts';
import { Proposal, type ProposalStatus } from '../../entities/proposal.ts';
import type { ReviewOutcome } from '../../entities/reviewCase.ts';
import { ApiError } from '../../errors.ts';
import type { CommandEffects, EventDraft } from '../types.ts';
import { proposalKinds } from './proposalKinds.ts';
import { proposalScopes } from './proposalScopes.ts';

const alreadyDecided = (proposal: Proposal) =>
  new ApiError('already_decided', `proposal ${proposal.id} was already decided (${proposal.status}); a proposal is applied at most once`);

/** Effects held back until the change succeeds, so a refused change leaves no event and no touched scope. */
function staged(effects: CommandEffects) {
  const events: EventDraft[] = [];
  const scopes: string[] = [];
  return {
    effects: {
      em: effects.em,
      now: effects.now,
      emit: (event: EventDraft) => events.push(event),
      touch: (...s: string[]) => scopes.push(...s),
    } satisfies CommandEffects,
    release() {
      for (const event of events) effects.emit(event);
      effects.touch(...scopes);
    },
  };
}

function finish(
  { now, emit, touch }: CommandEffects,
  proposal: Proposal,
  status: Exclude<ProposalStatus, 'open' | 'applying'>,
  reviewId: string,
  reason: string | null,
): void {
  Object.assign(proposal, { status, reason, updatedAt: now, ...(status === 'applied' ? { appliedAt: now } : {}) });
  emit({
    type: `proposal.${status}`,
    projectSlug: proposal.projectSlug,
    subjectId: proposal.id,
    data: { kind: proposal.kind, reviewId, ...(reason ? { reason } : {}) },
  });
  touch(...proposalScopes(proposal.projectSlug));
}

/**
 * Applies an adopted proposal, at most once: a compare-and-set in the
 * database moves it from open to applying (a second run finds nothing to
 * claim and is refused), then the change is made through the direct
 * command's rules, all in the closing command's transaction. A refusal by
 * those rules marks it failed with the reason instead.
 */
export async function adoptProposal(effects: CommandEffects, proposal: Proposal, reviewId: string): Promise<void> {
  const { em, now } = effects;
  const claimed = await em.nativeUpdate(
    Proposal,
    { id: proposal.id, status: 'open' },
    { status: 'applying', decidedAt: now, updatedAt: now },
  );
  if (claimed !== 1) throw alreadyDecided(proposal);
  await em.refresh(proposal);
  const change = staged(effects);
  try {
    const project = await em.findOneOrFail(Project, { id: proposal.projectId });
    await proposalKinds[proposal.kind].apply(change.effects, project, proposal.change, proposal.proposerId);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    finish(effects, proposal, 'failed', reviewId, error.message);
    return;
  }
  change.release();
  finish(effects, proposal, 'applied', reviewId, null);
}

/** A review that did not adopt the proposal returns it; it stays on record, unchanged. */
export function returnProposal(effects: CommandEffects, proposal: Proposal, reviewId: string, outcome: ReviewOutcome): void {
  if (proposal.status !== 'open') throw alreadyDecided(proposal);
  proposal.decidedAt = effects.now;
  finish(effects, proposal, 'returned', reviewId, `review ${reviewId} closed ${outcome}`);
}
