import { describe, expect, it } from 'vitest';
import { decideFollow, decideUnfollow, type Target } from '../../../src/commands/follows/followRules.ts';
import type { FollowParams } from '../../../src/commands/follows/followRules.ts';
import type { Follow } from '../../../src/entities/follow.ts';
import type { ApiError } from '../../../src/errors.ts';

const now = new Date('2026-09-11T12:00:00.000Z');
const follower = { agentId: 'agt_reader' };
const project: Target = { targetId: 'prj_garden', projectSlug: 'garden', topicSlug: null };
const topic: Target = { targetId: 'top_soil', projectSlug: 'garden', topicSlug: 'soil' };
const projectInput: FollowParams = { targetType: 'project', projectSlug: 'garden' };
const topicInput: FollowParams = { targetType: 'topic', projectSlug: 'garden', topicSlug: 'soil' };
const existing: Follow = {
  id: 'fol_1',
  agentId: 'agt_reader',
  targetType: 'project',
  targetId: 'prj_garden',
  projectSlug: 'garden',
  topicSlug: null,
  createdAt: new Date('2026-09-01T00:00:00.000Z'),
};

const answer = (error: ApiError) => ({ status: error.status, ...error.toBody() });

describe('deciding a follow', () => {
  it('refuses to follow a project that does not exist, naming the project', () => {
    const decision = decideFollow({ target: null, follow: null }, { targetType: 'project', projectSlug: 'orchard' }, follower, now);
    expect(decision.kind === 'refused' && answer(decision.error)).toEqual({
      status: 404,
      code: 'not_found',
      message: 'project orchard not found',
    });
  });

  it('refuses to follow a topic that does not exist, naming the topic', () => {
    const decision = decideFollow({ target: null, follow: null }, { ...topicInput, topicSlug: 'roots' }, follower, now);
    expect(decision.kind === 'refused' && answer(decision.error)).toEqual({
      status: 404,
      code: 'not_found',
      message: 'topic garden/roots not found',
    });
  });

  it('names a topic without a slug with an empty one when refusing it', () => {
    const decision = decideFollow({ target: null, follow: null }, { targetType: 'topic', projectSlug: 'garden' }, follower, now);
    expect(decision.kind === 'refused' && decision.error.message).toBe('topic garden/ not found');
  });

  it('creates a follow of a topic for the follower, where the topic’s posts are', () => {
    const decision = decideFollow({ target: topic, follow: null }, topicInput, follower, now);
    if (decision.kind !== 'created') throw new Error('expected a new follow');
    expect(decision.follow).toMatchObject({
      agentId: 'agt_reader',
      targetType: 'topic',
      targetId: 'top_soil',
      projectSlug: 'garden',
      topicSlug: 'soil',
      createdAt: now,
    });
    expect(decision.follow.id).toMatch(/^fol_/);
  });

  it('announces a new follow with an event naming the target and never the follower', () => {
    const decision = decideFollow({ target: project, follow: null }, projectInput, follower, now);
    if (decision.kind !== 'created') throw new Error('expected a new follow');
    expect(decision.event).toEqual({
      type: 'follow.created',
      projectSlug: 'garden',
      topicSlug: null,
      data: { targetType: 'project' },
      actor: null,
    });
  });

  it('changes the follower’s follows listing when it follows something new', () => {
    const decision = decideFollow({ target: project, follow: null }, projectInput, follower, now);
    expect(decision.kind === 'created' && decision.touched).toEqual(['follows:agt_reader']);
  });

  it('answers the existing follow when following again and records nothing', () => {
    expect(decideFollow({ target: project, follow: existing }, projectInput, follower, now)).toEqual({
      kind: 'unchanged',
      follow: existing,
    });
  });
});

describe('deciding an unfollow', () => {
  it('refuses to unfollow a target that does not exist, naming it', () => {
    const decision = decideUnfollow({ target: null, follow: null }, { targetType: 'project', projectSlug: 'orchard' }, follower);
    expect(decision.kind === 'refused' && answer(decision.error)).toEqual({
      status: 404,
      code: 'not_found',
      message: 'project orchard not found',
    });
  });

  it('refuses to unfollow something not followed, so the caller learns its list was not what it thought', () => {
    const decision = decideUnfollow({ target: topic, follow: null }, topicInput, follower);
    expect(decision.kind === 'refused' && answer(decision.error)).toEqual({
      status: 404,
      code: 'not_found',
      message: 'a follow of this topic not found',
    });
  });

  it('removes the follow, answering it as it was', () => {
    const decision = decideUnfollow({ target: project, follow: existing }, projectInput, follower);
    expect(decision.kind === 'removed' && decision.follow).toBe(existing);
  });

  it('announces an unfollow naming only the target and changes the follower’s follows listing', () => {
    const decision = decideUnfollow({ target: project, follow: existing }, projectInput, follower);
    if (decision.kind !== 'removed') throw new Error('expected a removal');
    expect(decision.event).toEqual({
      type: 'follow.removed',
      projectSlug: 'garden',
      topicSlug: null,
      data: { targetType: 'project' },
      actor: null,
    });
    expect(decision.touched).toEqual(['follows:agt_reader']);
  });
});
