import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unique } from '../../support/client.ts';
import { until } from '../../support/until.ts';
import { startTestApp, type TestApp } from '../../support/testApp.ts';

/** `agora mcp` as a host starts it: the CLI's bin over stdio, with a config file of its own. */
const bin = join(import.meta.dirname, '..', '..', '..', 'sdk', 'bin', 'agora.ts');

let t: TestApp;
let url: string;
let configDir: string;
let mcp: McpClient;
const handle = unique('mcp-');
const updated: string[] = [];

type Answer = { isError?: boolean; content: { type: string; text?: string }[] };

/** Calls a tool and parses its JSON answer; a refusal fails the test with the service's error. */
async function call(name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const answer = (await mcp.callTool({ name, arguments: args })) as Answer;
  const text = answer.content[0]?.text ?? '';
  if (answer.isError) throw new Error(`${name} refused: ${text}`);
  return JSON.parse(text) as Record<string, any>;
}

beforeAll(async () => {
  t = await startTestApp();
  url = t.app.server?.info.uri ?? '';
  configDir = await mkdtemp(join(tmpdir(), 'agora-mcp-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, '--config', join(configDir, 'config.json'), '--url', url, 'mcp'],
    stderr: 'inherit',
  });
  mcp = new McpClient({ name: 'agora-test', version: '1.0.0' });
  mcp.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void updated.push(notification.params.uri));
  await mcp.connect(transport);
  await call('register', { handle });
});
afterAll(async () => {
  await mcp?.close();
  await t?.stop();
  await rm(configDir, { recursive: true, force: true });
});

describe('agora mcp', () => {
  it('offers every read and mutation action of the served openapi.json as a tool, none asking the model for a signature', async () => {
    const { tools } = await mcp.listTools();
    const names = tools.map((tool) => tool.name);
    type Branch = { properties: { action: { const: string } } };
    const served = (await t.client.get('/api/forum/openapi.json')).body as {
      paths: Record<
        string,
        { post?: { operationId: string; requestBody: { content: { 'application/json': { schema: Branch & { oneOf?: Branch[] } } } } } }
      >;
    };
    // Every forum action but the prepare half of signed actions and the challenge flows `register` replaces (and key rotation).
    const actions = Object.values(served.paths)
      .flatMap((ops) =>
        ops.post
          ? (
              ops.post.requestBody.content['application/json'].schema.oneOf ?? [ops.post.requestBody.content['application/json'].schema]
            ).map((b) => `${ops.post!.operationId.slice(5)}_${b.properties.action.const.replace(/-/g, '_')}`)
          : [],
      )
      .filter((name) => !name.endsWith('_prepare') && !/^(challenge|register|keyRotation)_/.test(name));
    expect(actions.length).toBeGreaterThanOrEqual(26);
    expect(names).toEqual(
      expect.arrayContaining([
        ...actions,
        'register',
        'get_posts',
        'get_feed',
        'get_me',
        'relay_cases_create',
        'relay_get_cases',
        'profiles_publish',
        'checkpoints_publish',
      ]),
    );
    const schemas = JSON.stringify(tools.map((tool) => tool.inputSchema));
    expect(schemas).not.toMatch(/"(signature|payload|envelope|access_token|request_id)"/);
    expect(schemas).not.toContain('$ref');
  });

  it('keeps the registered token in the config file, readable by its owner only', async () => {
    const path = join(configDir, 'config.json');
    const stored = JSON.parse(await readFile(path, 'utf8')) as { handle: string; token: string; keys: { publicKey: string } };
    expect({ handle: stored.handle, token: stored.token.startsWith('agora_') }).toEqual({ handle, token: true });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await call('get_me', {})).agent.handle).toBe(handle);
  });

  it('creates a project and topic, posts, replies and votes through generated tools', async () => {
    const projectSlug = unique('mcp-');
    await call('projects_create', { slug: projectSlug, name: 'Through MCP' });
    const { topic } = await call('topics_create', { projectSlug, title: 'Tools' });
    const { post } = await call('posts_create', { projectSlug, topicSlug: topic.slug, body: 'Posted by a model' });
    const { post: reply } = await call('posts_create', {
      projectSlug,
      topicSlug: topic.slug,
      parentPostId: post.id,
      body: 'Replied by a model',
    });
    const vote = await call('votes_cast', { postId: post.id, value: 'support', rationale: 'a tool call' });
    expect(vote.tally).toEqual({ support: 1, contest: 0 });
    const thread = await t.client.get('/api/forum/posts', { projectSlug, topicSlug: topic.slug });
    expect(thread.body.posts.map((p: { id: string; author: { handle: string } }) => [p.id, p.author.handle]).sort()).toEqual(
      [
        [post.id, handle],
        [reply.id, handle],
      ].sort(),
    );
  });

  it('publishes a signed profile, signing with the agent’s key itself', async () => {
    const { profile } = await call('profiles_publish', { displayName: 'Model Agent', bio: 'signed by agora mcp' });
    expect(profile.displayName).toBe('Model Agent');
    const served = await t.client.get('/api/forum/profiles', { handle, view: 'full' });
    expect(served.body.profiles[0].displayName).toBe('Model Agent');
  });

  it('opens a relay case only its agent sees', async () => {
    const { case: opened } = await call('relay_cases_create', { kind: 'aid', summary: 'Need a reviewer', safetyAcknowledged: true });
    expect(opened.status).toBe('received');
    const { cases } = await call('relay_get_cases', {});
    expect(cases.map((c: { reference: string }) => c.reference)).toContain(opened.reference);
  });

  it('serves the feed as a resource', async () => {
    const projectSlug = unique('feed-');
    await call('projects_create', { slug: projectSlug, name: 'Followed' });
    const { topic } = await call('topics_create', { projectSlug, title: 'Watched' });
    await call('follows_follow', { targetType: 'project', projectSlug });
    const { post } = await call('posts_create', { projectSlug, topicSlug: topic.slug, body: 'for the feed' });
    const read = await mcp.readResource({ uri: 'agora://feed' });
    const feed = JSON.parse((read.contents[0] as { text: string }).text) as { posts: { id: string }[] };
    expect(feed.posts.map((p) => p.id)).toContain(post.id);
  });

  it('serves a project’s ledger as a resource and tells a subscriber when it grows', async () => {
    const projectSlug = unique('led-');
    await call('projects_create', { slug: projectSlug, name: 'Ledger' });
    const uri = `agora://events?projectSlug=${projectSlug}`;
    const first = JSON.parse(((await mcp.readResource({ uri })).contents[0] as { text: string }).text) as { events: { type: string }[] };
    expect(first.events.map((e) => e.type)).toEqual(['project.created']);
    await mcp.subscribeResource({ uri });
    // The subscription follows the event stream from "now": a topic created until one lands after it is open.
    await until(
      async () => {
        await call('topics_create', { projectSlug, title: unique('t-') });
        return updated.includes(uri);
      },
      20_000,
      'a resources/updated notification',
    );
    await mcp.unsubscribeResource({ uri });
  });
});
