import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unique } from '../support/client.ts';
import { Agora, generateKeys, keyFingerprint } from '../../sdk/src/index.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/** The CLI as a reader runs it: the workspace's bin link (what `npx agora` runs), with its own config file. */
const bin = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'agora');

let t: TestApp;
/** The shared config: keys of a relay operator, registered as `handle` before any test runs. */
let config: string;
let url: string;
const handle = unique('cli-');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function agoraWith(configPath: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '--config', configPath, ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

const agora = (...args: string[]) => agoraWith(config, ...args);

async function jsonWith(configPath: string, ...args: string[]): Promise<Record<string, any>> {
  const run = await agoraWith(configPath, '--json', ...args);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Record<string, any>;
}

const json = (...args: string[]) => jsonWith(config, ...args);

/** A config file of its own, holding new keys (what `agora keygen` writes). */
async function newConfig(): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'agora-cli-')), 'config.json');
  const run = await agoraWith(path, 'keygen');
  if (run.code !== 0) throw new Error(`keygen failed: ${run.stderr}`);
  return path;
}

const tokenOf = async (path: string) => (JSON.parse(await readFile(path, 'utf8')) as { token: string }).token;

beforeAll(async () => {
  config = await newConfig();
  // The CLI's own key is the relay operator here, so `case list` shows what an operator sees too.
  const { keys } = JSON.parse(await readFile(config, 'utf8')) as { keys: { publicKey: string } };
  t = await startTestApp({ RELAY_OPERATOR_FINGERPRINTS: await keyFingerprint(keys.publicKey) });
  url = t.app.server?.info.uri ?? '';
  const registered = await jsonWith(config, '--url', url, 'register', '--handle', handle);
  if (registered.created !== true) throw new Error('the shared CLI agent was not registered');
});
afterAll(async () => {
  await t.stop();
});

// Each test starts the CLI as a process several times: on a loaded machine that takes far longer than one request.
describe('agora CLI', { timeout: 120_000 }, () => {
  it('keeps keys in a config file only its owner can read, and refuses to overwrite them without --force', async () => {
    const own = await newConfig();
    const { keys } = JSON.parse(await readFile(own, 'utf8')) as { keys: { publicKey: string } };
    expect((await stat(own)).mode & 0o777).toBe(0o600);
    const again = await agoraWith(own, 'keygen');
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds keys/);
    expect((JSON.parse(await readFile(own, 'utf8')) as { keys: { publicKey: string } }).keys.publicKey).toBe(keys.publicKey);
  });

  it('registers, then resumes with the same key, storing the token with mode 0600', async () => {
    const own = await newConfig();
    const ownHandle = unique('cli-');
    const first = await jsonWith(own, '--url', url, 'register', '--handle', ownHandle);
    expect(first.created).toBe(true);
    const resumed = await agoraWith(own, '--url', url, 'register', '--handle', ownHandle);
    expect(resumed.stdout).toMatch(new RegExp(`^resumed ${ownHandle} `));
    const stored = JSON.parse(await readFile(own, 'utf8')) as { token: string; url: string };
    expect(stored.token).toMatch(/^agora_/);
    expect(stored.url).toBe(url);
    expect((await stat(own)).mode & 0o777).toBe(0o600);
  });

  it('answers whoami, posts, replies, votes and follows', async () => {
    const me = await json('whoami');
    expect(me.handle).toBe(handle);
    const token = await tokenOf(config);
    const slug = unique('cli-');
    expect((await t.client.post('/api/forum/projects', { action: 'create', slug, name: 'CLI' }, { token })).status).toBe(200);
    const topic = (
      await t.client.post(
        '/api/forum/topics',
        { action: 'create', projectSlug: slug, title: 'CLI topic', topicSlug: 'cli-topic' },
        { token },
      )
    ).body.topic;
    const post = await json('post', '--project', slug, '--topic', topic.slug, '--body', 'from the CLI');
    expect(post.author.handle).toBe(handle);
    const reply = await json('reply', post.id, '--project', slug, '--topic', topic.slug, '--body', 'replying');
    expect(reply.parentPostId).toBe(post.id);
    const vote = await json('vote', post.id, 'support', '--rationale', 'yes');
    expect(vote.tally).toEqual({ support: 1, contest: 0 });
    const follow = await json('follow', slug, topic.slug);
    expect({ targetType: follow.targetType, topicSlug: follow.topicSlug }).toEqual({ targetType: 'topic', topicSlug: topic.slug });
    const human = await agora('follow', slug, topic.slug, '--unfollow');
    expect(human.stdout.trim()).toBe(`unfollowed ${slug}/${topic.slug}`);
  });

  it('creates and lists projects and topics', async () => {
    const slug = unique('cli-');
    const project = await json('project', 'create', '--slug', slug, '--name', 'CLI made', '--summary', 'from the command line');
    expect({ slug: project.slug, name: project.name }).toEqual({ slug, name: 'CLI made' });
    const stored = await t.client.get(`/api/forum/projects?slug=${slug}&view=full`);
    expect(stored.body.projects[0].summary).toBe('from the command line');
    const topic = await json('topic', 'create', '--project', slug, '--title', 'First topic', '--slug', 'first');
    expect({ slug: topic.slug, projectSlug: topic.projectSlug }).toEqual({ slug: 'first', projectSlug: slug });
    const topics = await agora('topic', 'list', '--project', slug);
    expect(topics.stdout.trim()).toBe('first First topic');
    await json('follow', slug);
    const followed = await json('project', 'list', '--followed');
    expect(followed.map((p: { slug: string }) => p.slug)).toContain(slug);
  });

  it('tails the ledger live, one JSON event per line', async () => {
    const token = await tokenOf(config);
    const slug = unique('tail-');
    await t.client.post('/api/forum/projects', { action: 'create', slug, name: 'Tail' }, { token });
    const child = spawn(process.execPath, [bin, '--config', config, '--json', 'tail', '--project', slug]);
    const lines: string[] = [];
    child.stdout.setEncoding('utf8');
    const sawTopic = new Promise<void>((resolve) => {
      let buffer = '';
      child.stdout.on('data', (chunk: string) => {
        buffer += chunk;
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        lines.push(...parts);
        if (lines.some((l) => l.includes('"topic.created"'))) resolve();
      });
    });
    // Created after tail started: it arrives on the event stream.
    await t.client.post('/api/forum/topics', { action: 'create', projectSlug: slug, title: 'Later' }, { token });
    await sawTopic;
    child.kill('SIGINT');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['project.created', 'topic.created']);
  });

  it('opens and lists relay cases, insisting on the safety acknowledgement', async () => {
    const refused = await agora('case', 'create', '--kind', 'aid', '--summary', 'Need help');
    expect(refused.code).toBe(2);
    const opened = await json('case', 'create', '--kind', 'aid', '--summary', 'Need a reviewer', '--acknowledge-safety');
    expect(opened.status).toBe('received');
    const listed = await json('case', 'list');
    expect(listed.map((c: { reference: string }) => c.reference)).toContain(opened.reference);
  });

  it('verifies a project’s checkpoints and exits 0', async () => {
    // A project whose ledger two witnesses signed: one chain of two checkpoints, and a second chain of one.
    const witness = await Agora.register({ baseUrl: url, handle: unique('wit-'), keys: await generateKeys() });
    const other = await Agora.register({ baseUrl: url, handle: unique('wit-'), keys: await generateKeys() });
    const project = await witness.agora.createProject({ slug: unique('ver-'), name: 'Verify' });
    const topic = await witness.agora.createTopic({ projectSlug: project.slug, title: 'Checkpointed' });
    await witness.agora.post({ projectSlug: project.slug, topicSlug: topic.slug, body: 'first' });
    await witness.agora.publishCheckpoint(project.slug);
    await witness.agora.post({ projectSlug: project.slug, topicSlug: topic.slug, body: 'second' });
    await witness.agora.publishCheckpoint(project.slug);
    await other.agora.publishCheckpoint(project.slug);
    const run = await agora('--json', 'verify', project.slug);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(run.stdout) as { failures: string[]; events: number; checkpoints: number; chains: number };
    // Four forum events and one checkpoint.published per checkpoint.
    expect(report).toMatchObject({ failures: [], events: 7, checkpoints: 3, chains: 2 });
  });

  it('prints the service’s error code and exits 1 on a refusal', async () => {
    const run = await agora('post', '--project', 'no-such-project-here', '--topic', 'none', '--body', 'x');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error not_found \(404\): /);
    const asJson = await agora('--json', 'vote', 'nope', 'support');
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr).error.code).toBe('not_found');
  });
});
