import { beforeAll, describe, expect, it } from 'vitest';
import { adoptProposal } from '../../../src/commands/proposals/settleProposal.ts';
import { Membership } from '../../../src/entities/membership.ts';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { Project } from '../../../src/entities/project.ts';
import { Proposal } from '../../../src/entities/proposal.ts';
import { Topic } from '../../../src/entities/topic.ts';
import { ApiError } from '../../../src/errors.ts';
import { createProject, registerAgent, unique, type TestAgent } from '../../support/client.ts';
import { addMember, createTopic, newTopic, type TestTopic } from '../../support/forum.ts';
import { castVotes, closeReview, openProposal, propose, reviewPost } from '../../support/governance.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let topic: TestTopic;
let owner: TestAgent;
let steward: TestAgent;
let proposer: TestAgent;
let voters: TestAgent[];
beforeAll(async () => {
  topic = await newTopic(t.client, { reviewMode: 'conciliar' });
  owner = topic.owner;
  [steward, proposer] = [await registerAgent(t.client), await registerAgent(t.client)];
  voters = await Promise.all(Array.from({ length: 3 }, () => registerAgent(t.client)));
  await addMember(t.client, owner, topic.projectSlug, steward);
});

const stored = (id: string) => t.orm.em.fork().findOneOrFail(Proposal, { id });
const eventsOf = (type: string, subjectId: string) => t.orm.em.fork().find(OutboxEvent, { type, subjectId }, { orderBy: { id: 'asc' } });
const unanimous = (value: 'support' | 'contest') => voters.map((voter) => [voter, value] as [TestAgent, typeof value]);

/** Links the proposal to a new review post, has all voters vote `value`, and closes the review as `closer`. */
async function decide(proposalId: string, value: 'support' | 'contest' = 'support', closer: TestAgent = owner) {
  const { post, review } = await reviewPost(t.client, proposer, topic, proposalId);
  await castVotes(t.client, post.id, unanimous(value));
  return { reviewId: review.reviewId as string, reply: await closeReview(t.client, closer, review.reviewId) };
}

/** Proposes, adopts and returns the closing reply, which must succeed. */
async function adopt(kind: string, fields: Record<string, string>) {
  const proposal = await openProposal(t.client, proposer, topic.projectSlug, kind, fields);
  const { reviewId, reply } = await decide(proposal.proposalId);
  expect(reply.status).toBe(200);
  return { proposalId: proposal.proposalId as string, reviewId, reply };
}

describe('creating proposals', () => {
  it('creates each kind, open, with its recorded change and a proposal.created event', async () => {
    const member = await registerAgent(t.client);
    const cases: [string, Record<string, string>, Record<string, unknown>][] = [
      ['project.update', { name: 'Renamed' }, { name: 'Renamed' }],
      ['topic.create', { title: 'Budget Review' }, { title: 'Budget Review', topicSlug: 'budget-review', reviewMode: 'open' }],
      [
        'topic.update',
        { topicId: topic.topicId, title: 'Better title' },
        { topicId: topic.topicId, topicSlug: topic.topicSlug, title: 'Better title' },
      ],
      [
        'topic.review-mode',
        { topicId: topic.topicId, reviewMode: 'open' },
        { topicId: topic.topicId, topicSlug: topic.topicSlug, reviewMode: 'open' },
      ],
      ['membership.add', { handle: member.handle, role: 'owner' }, { handle: member.handle, role: 'owner' }],
      ['membership.add', { handle: member.handle }, { handle: member.handle, role: 'steward' }],
      ['membership.remove', { handle: steward.handle }, { handle: steward.handle }],
    ];
    for (const [kind, fields, change] of cases) {
      const reply = await propose(t.client, proposer, topic.projectSlug, kind, { ...fields, rationale: 'because' });
      expect(reply.status, kind).toBe(200);
      expect(reply.body.proposal).toEqual({
        proposalId: expect.stringMatching(/^prp_/),
        projectSlug: topic.projectSlug,
        kind,
        ...change,
        status: 'open',
        proposer: proposer.handle,
        reviewId: null,
      });
      const events = await eventsOf('proposal.created', reply.body.proposal.proposalId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ actor: proposer.handle, projectSlug: topic.projectSlug, data: { kind, ...change } });
    }
  });

  it('lets any authenticated agent propose without a role, by POST or GET with action=create, but not without a token', async () => {
    const stranger = await registerAgent(t.client);
    expect((await propose(t.client, stranger, topic.projectSlug, 'topic.create', { title: 'From a stranger' })).status).toBe(200);
    const viaGet = await t.client.get('/api/forum/proposals', {
      action: 'create',
      projectSlug: topic.projectSlug,
      kind: 'project.update',
      summary: '',
      access_token: stranger.token,
    });
    expect(viaGet.status).toBe(200);
    expect(viaGet.body.proposal).toMatchObject({ kind: 'project.update', summary: '', proposer: stranger.handle });
    expect(
      (
        await t.client.post('/api/forum/proposals', {
          action: 'create',
          projectSlug: topic.projectSlug,
          kind: 'topic.create',
          title: 'Anonymous',
        })
      ).status,
    ).toBe(401);
  });

  it('refuses a kind without its parameters, or with another kind’s, with 400 naming the field', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['project.update', {}, 'name or summary'],
      ['topic.create', {}, 'title'],
      ['topic.update', { title: 'No topic' }, 'topicId'],
      ['topic.update', { topicId: topic.topicId }, 'title'],
      ['topic.review-mode', { topicId: topic.topicId }, 'reviewMode'],
      ['membership.add', { role: 'owner' }, 'handle'],
      ['membership.remove', {}, 'handle'],
      ['membership.remove', { handle: steward.handle, role: 'owner' }, 'role'],
      ['topic.create', { title: 'Mixed', handle: steward.handle }, 'handle'],
    ];
    for (const [kind, fields, field] of cases) {
      const reply = await propose(t.client, proposer, topic.projectSlug, kind, fields);
      expect(reply.status, `${kind} ${JSON.stringify(fields)}`).toBe(400);
      expect(reply.body.error.details[0].field).toBe(field);
    }
    expect((await propose(t.client, proposer, topic.projectSlug, 'topic.delete', { topicId: topic.topicId })).status).toBe(400);
    expect(
      (await propose(t.client, proposer, topic.projectSlug, 'topic.create', { title: 'Long', rationale: 'r'.repeat(2001) })).status,
    ).toBe(400);
  });

  it('refuses unknown targets with 400: project, a topic of another project, an unregistered handle, a non-member to remove', async () => {
    const other = await newTopic(t.client);
    const outsider = await registerAgent(t.client);
    const cases: [string, string, Record<string, string>, string][] = [
      [unique('p-'), 'topic.create', { title: 'Nowhere' }, 'projectSlug'],
      [topic.projectSlug, 'topic.update', { topicId: other.topicId, title: 'Foreign' }, 'topicId'],
      [topic.projectSlug, 'topic.review-mode', { topicId: 'tpc_00000000000000000000000000', reviewMode: 'open' }, 'topicId'],
      [topic.projectSlug, 'membership.add', { handle: unique('nobody') }, 'handle'],
      [topic.projectSlug, 'membership.remove', { handle: outsider.handle }, 'handle'],
    ];
    for (const [projectSlug, kind, fields, field] of cases) {
      const reply = await propose(t.client, proposer, projectSlug, kind, fields);
      expect(reply.status, kind).toBe(400);
      expect(reply.body.error.details).toEqual([{ field, issue: expect.any(String) }]);
    }
  });
});

describe('reading proposals', () => {
  it('filters by project, status, kind and id; view=full adds rationale and timestamps; pages', async () => {
    const projectSlug = await createProject(t.client, owner);
    const a = await openProposal(t.client, proposer, projectSlug, 'project.update', { summary: 'New summary', rationale: 'clarity' });
    const b = await openProposal(t.client, proposer, projectSlug, 'topic.create', { title: 'Second' });
    const all = await t.client.get('/api/forum/proposals', { projectSlug });
    expect(all.body.proposals.map((p: { proposalId: string }) => p.proposalId)).toEqual([a.proposalId, b.proposalId]);
    expect((await t.client.get('/api/forum/proposals', { projectSlug, kind: 'topic.create' })).body.proposals).toEqual([b]);
    expect((await t.client.get('/api/forum/proposals', { projectSlug, status: 'applied' })).body.proposals).toEqual([]);
    const full = (await t.client.get('/api/forum/proposals', { proposalId: a.proposalId, view: 'full' })).body.proposals[0];
    expect(full).toMatchObject({
      ...a,
      rationale: 'clarity',
      reason: null,
      decidedAt: null,
      appliedAt: null,
      createdAt: expect.any(String),
    });
    const first = await t.client.get('/api/forum/proposals', { projectSlug, limit: '1' });
    const second = await t.client.get('/api/forum/proposals', { projectSlug, limit: '1', cursor: first.body.nextCursor });
    expect(second.body).toMatchObject({ proposals: [b], nextCursor: null });
  });

  it('answers 304 until a proposal is created, linked to a review, or decided', async () => {
    const queries: Record<string, string>[] = [{ projectSlug: topic.projectSlug }, {}];
    const etagsOf = () => Promise.all(queries.map(async (q) => (await t.client.get('/api/forum/proposals', q)).headers.get('etag') ?? ''));
    const conditional = (etags: string[]) =>
      Promise.all(
        queries.map(
          async (q, i) => (await t.client.get('/api/forum/proposals', q, { headers: { 'if-none-match': etags[i] ?? '' } })).status,
        ),
      );
    let etags = await etagsOf();
    expect(await conditional(etags)).toEqual([304, 304]);
    const proposal = await openProposal(t.client, proposer, topic.projectSlug, 'topic.create', { title: 'Watched' });
    expect(await conditional(etags)).toEqual([200, 200]);
    etags = await etagsOf();
    const { post, review } = await reviewPost(t.client, proposer, topic, proposal.proposalId);
    expect(await conditional(etags)).toEqual([200, 200]);
    etags = await etagsOf();
    await castVotes(t.client, post.id, unanimous('contest'));
    expect(await conditional(etags)).toEqual([304, 304]);
    await closeReview(t.client, owner, review.reviewId);
    expect(await conditional(etags)).toEqual([200, 200]);
  });
});

describe('adopting proposals', () => {
  it('applies an adopted topic.create in the closing transaction: the topic, its event and proposal.applied', async () => {
    const slug = unique('adopted-');
    const { proposalId, reviewId, reply } = await adopt('topic.create', {
      title: 'Adopted topic',
      topicSlug: slug,
      reviewMode: 'conciliar',
    });
    expect(reply.body.review).toMatchObject({ outcome: 'adopted', proposalId });
    expect(reply.body.proposal).toMatchObject({ proposalId, status: 'applied', reviewId, appliedAt: expect.any(String), reason: null });
    const created = await t.orm.em.fork().findOneOrFail(Topic, { projectSlug: topic.projectSlug, slug });
    expect(created).toMatchObject({ title: 'Adopted topic', reviewMode: 'conciliar', createdBy: proposer.agentId });
    expect(await eventsOf('topic.created', created.id)).toHaveLength(1);
    const applied = await eventsOf('proposal.applied', proposalId);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ actor: owner.handle, projectSlug: topic.projectSlug, data: { kind: 'topic.create', reviewId } });
    // The change's own event comes first, then proposal.applied (outbox ids are bigint strings).
    expect(BigInt(applied[0]?.id ?? 0)).toBeGreaterThan(BigInt((await eventsOf('topic.created', created.id))[0]?.id ?? 0));
  });

  it('applies each other kind through the direct rules: project update, topic title and review mode, membership add and remove', async () => {
    const em = () => t.orm.em.fork();
    await adopt('project.update', { name: 'Governed name', summary: 'Governed summary' });
    expect(await em().findOneOrFail(Project, { slug: topic.projectSlug })).toMatchObject({
      name: 'Governed name',
      summary: 'Governed summary',
    });

    const target = await createTopic(t.client, owner, topic.projectSlug);
    await adopt('topic.update', { topicId: target.topicId, title: 'Governed title' });
    await adopt('topic.review-mode', { topicId: target.topicId, reviewMode: 'conciliar' });
    expect(await em().findOneOrFail(Topic, { id: target.topicId })).toMatchObject({ title: 'Governed title', reviewMode: 'conciliar' });
    expect(await eventsOf('topic.updated', target.topicId)).toHaveLength(1);
    expect(await eventsOf('topic.review-mode-changed', target.topicId)).toHaveLength(1);

    const member = await registerAgent(t.client);
    await adopt('membership.add', { handle: member.handle, role: 'steward' });
    const project = await em().findOneOrFail(Project, { slug: topic.projectSlug });
    expect(await em().findOne(Membership, { projectId: project.id, agentId: member.agentId })).toMatchObject({ role: 'steward' });
    await adopt('membership.remove', { handle: member.handle });
    expect(await em().findOne(Membership, { projectId: project.id, agentId: member.agentId })).toBeNull();
    expect(await eventsOf('membership.removed', member.agentId)).toHaveLength(1);
  });

  it('applies a proposal at most once: a second closure is 409, the apply path refuses it, the database refuses to re-enter applying', async () => {
    const { proposalId, reviewId } = await adopt('topic.create', { title: 'Only once', topicSlug: unique('once-') });
    const again = await closeReview(t.client, owner, reviewId);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_decided');

    const rerun = t.orm.em.fork().transactional(async (em) => {
      const proposal = await em.findOneOrFail(Proposal, { id: proposalId });
      await adoptProposal({ em, now: new Date(), emit: () => undefined, touch: () => undefined }, proposal, reviewId);
    });
    await expect(rerun).rejects.toSatisfy((error) => error instanceof ApiError && error.code === 'already_decided');
    await expect(t.orm.em.fork().execute(`update proposal set status = 'applying' where id = ?`, [proposalId])).rejects.toThrow(
      /cannot move from applied to applying/,
    );
    expect(await t.orm.em.fork().count(Topic, { projectSlug: topic.projectSlug, title: 'Only once' })).toBe(1);
    expect(await eventsOf('proposal.applied', proposalId)).toHaveLength(1);
    expect(await stored(proposalId)).toMatchObject({ status: 'applied' });
  });

  it('fails an adopted change its rules refuse, with the reason and no change: removing the creating owner, a taken topic slug', async () => {
    const removal = await adopt('membership.remove', { handle: owner.handle });
    expect(removal.reply.body.proposal).toMatchObject({
      status: 'failed',
      reason: 'the creating owner cannot be removed',
      appliedAt: null,
    });
    const project = await t.orm.em.fork().findOneOrFail(Project, { slug: topic.projectSlug });
    expect(await t.orm.em.fork().findOne(Membership, { projectId: project.id, agentId: owner.agentId })).toMatchObject({
      role: 'owner',
      isCreator: true,
    });
    expect(await eventsOf('membership.removed', owner.agentId)).toHaveLength(0);
    const failed = await eventsOf('proposal.failed', removal.proposalId);
    expect(failed[0]).toMatchObject({
      data: { kind: 'membership.remove', reviewId: removal.reviewId, reason: 'the creating owner cannot be removed' },
    });

    const taken = await adopt('topic.create', { title: 'Duplicate', topicSlug: topic.topicSlug });
    expect(taken.reply.body.proposal).toMatchObject({
      status: 'failed',
      reason: `topic slug ${topic.topicSlug} is taken in ${topic.projectSlug}`,
    });
    expect(await t.orm.em.fork().count(Topic, { projectSlug: topic.projectSlug, slug: topic.topicSlug })).toBe(1);
  });

  it('returns the proposal when its review rejects it or finds no consensus, changing nothing', async () => {
    const rejected = await openProposal(t.client, proposer, topic.projectSlug, 'topic.create', {
      title: 'Rejected',
      topicSlug: unique('rejected-'),
    });
    const { reviewId, reply } = await decide(rejected.proposalId, 'contest');
    expect(reply.body.proposal).toMatchObject({
      status: 'returned',
      reason: `review ${reviewId} closed rejected`,
      decidedAt: expect.any(String),
      appliedAt: null,
    });
    expect(await t.orm.em.fork().count(Topic, { title: 'Rejected' })).toBe(0);
    expect(await eventsOf('proposal.returned', rejected.proposalId)).toHaveLength(1);

    const unsettled = await openProposal(t.client, proposer, topic.projectSlug, 'project.update', { summary: 'Unsettled' });
    const { post, review } = await reviewPost(t.client, proposer, topic, unsettled.proposalId);
    await castVotes(t.client, post.id, [[voters[0] as TestAgent, 'support']]);
    expect((await closeReview(t.client, steward, review.reviewId)).body.proposal).toMatchObject({
      status: 'returned',
      reason: `review ${review.reviewId} closed no-consensus`,
    });
  });

  it('lets only an owner close a review deciding a membership proposal (a steward gets 403)', async () => {
    const member = await registerAgent(t.client);
    const proposal = await openProposal(t.client, proposer, topic.projectSlug, 'membership.add', { handle: member.handle, role: 'owner' });
    const { reply, reviewId } = await decide(proposal.proposalId, 'support', steward);
    expect(reply.status).toBe(403);
    expect((await stored(proposal.proposalId)).status).toBe('open');
    const byOwner = await closeReview(t.client, owner, reviewId);
    expect(byOwner.body.proposal).toMatchObject({ status: 'applied' });
    expect(byOwner.body.review.decisionAuthority).toEqual({ handle: owner.handle, role: 'owner' });
  });
});
