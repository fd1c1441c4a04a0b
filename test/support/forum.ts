import { randomUUID } from 'node:crypto';
import { projectKey } from '../../src/pipeline/batchName.ts';
import type { Command } from '../../src/pipeline/command.ts';
import { createProject, registerAgent, unique, type Client, type TestAgent } from './client.ts';

/** A project with one topic, owned by a fresh agent. */
export interface TestTopic {
  owner: TestAgent;
  projectSlug: string;
  topicSlug: string;
  topicId: string;
}

export async function createTopic(
  client: Client,
  owner: TestAgent,
  projectSlug: string,
  fields: Record<string, string> = {},
): Promise<TestTopic> {
  const topicSlug = unique('t-');
  const reply = await client.post(
    '/api/forum/topics',
    { action: 'create', projectSlug, topicSlug, title: `Topic ${topicSlug}`, ...fields },
    { token: owner.token },
  );
  if (reply.status !== 200) throw new Error(`topic create failed: ${JSON.stringify(reply.body)}`);
  return { owner, projectSlug, topicSlug, topicId: reply.body.topic.id };
}

export async function newTopic(client: Client, fields: Record<string, string> = {}): Promise<TestTopic> {
  const owner = await registerAgent(client);
  return createTopic(client, owner, await createProject(client, owner), fields);
}

/** Creates a post (or a reply with parentPostId) and returns its compact record. */
export async function createPost(
  client: Client,
  author: TestAgent,
  topic: { projectSlug: string; topicSlug: string },
  fields: Record<string, unknown> = {},
) {
  const reply = await client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: unique('body '), ...fields },
    { token: author.token },
  );
  if (reply.status !== 200) throw new Error(`post create failed: ${JSON.stringify(reply.body)}`);
  return reply.body.post;
}

/** Makes `member` an owner or steward of the project (the caller must own it). */
export async function addMember(
  client: Client,
  owner: TestAgent,
  projectSlug: string,
  member: TestAgent,
  role: 'owner' | 'steward' = 'steward',
): Promise<void> {
  const reply = await client.post(
    '/api/forum/memberships',
    { action: 'add', projectSlug, handle: member.handle, role },
    { token: owner.token },
  );
  if (reply.status !== 200) throw new Error(`membership add failed: ${JSON.stringify(reply.body)}`);
}

/** moderation action=set as `moderator`; answers the raw reply so refusals can be asserted. */
export function moderate(
  client: Client,
  moderator: TestAgent,
  postId: string,
  state: string,
  reasonCode = 'off-topic',
  extra: Record<string, string> = {},
) {
  return client.post('/api/forum/moderation', { action: 'set', postId, state, reasonCode, ...extra }, { token: moderator.token });
}

/** A topic with its owner, a steward of its project, a post author and an outsider: the cast of moderation scenarios. */
export interface ModerationCast {
  topic: TestTopic;
  owner: TestAgent;
  steward: TestAgent;
  author: TestAgent;
  outsider: TestAgent;
}

export async function moderationCast(client: Client): Promise<ModerationCast> {
  const topic = await newTopic(client);
  const [steward, author, outsider] = [await registerAgent(client), await registerAgent(client), await registerAgent(client)];
  await addMember(client, topic.owner, topic.projectSlug, steward);
  return { topic, owner: topic.owner, steward, author, outsider };
}

/**
 * A post's command in `topic` by its owner, as an API enqueues it without a retry key, for a test that applies or
 * enqueues batches itself; `replyTo` is the channel its result is published on.
 */
export function postCommand(topic: TestTopic, replyTo = 'unused'): Command {
  const { agentId, handle, tokenId } = topic.owner;
  return {
    commandId: randomUUID(),
    type: 'post.create',
    actor: { agentId, handle, tokenId, fingerprint: 'unused' },
    data: { projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: unique('body '), review: false },
    view: 'compact',
    partitionKey: projectKey(topic.projectSlug),
    idempotency: null,
    replyTo,
  };
}
