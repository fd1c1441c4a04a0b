import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { checkResponse } from './openApiContract.ts';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface CallOptions {
  token?: string;
  headers?: Record<string, string>;
  form?: boolean;
}

/** Real HTTP to the service under test. */
export class Client {
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  async get(path: string, query: Record<string, string> = {}, options: CallOptions = {}): Promise<Reply> {
    const qs = new URLSearchParams(query).toString();
    return this.send('GET', `${path}${qs ? `?${qs}` : ''}`, undefined, options);
  }

  async post(path: string, fields: Record<string, unknown>, options: CallOptions = {}): Promise<Reply> {
    const body = options.form ? new URLSearchParams(fields as Record<string, string>).toString() : JSON.stringify(fields);
    const type = options.form ? 'application/x-www-form-urlencoded' : 'application/json';
    return this.send('POST', path, body, { ...options, headers: { 'content-type': type, ...options.headers } });
  }

  async send(method: string, path: string, body: string | undefined, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(`${this.base}${path}`, { method, headers, body });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : null;
    await checkResponse(this.base, method, path, response.status, parsed);
    return { status: response.status, headers: response.headers, body: parsed };
  }
}

export function unique(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** An Ed25519 key pair made by node:crypto, independent of the service's @noble/ed25519. */
export interface KeyPair {
  publicKey: string;
  privateKey: KeyObject;
}

export function newKeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return { publicKey: jwk.x as string, privateKey };
}

export function signMessage(key: KeyPair, message: string): string {
  return sign(null, Buffer.from(message, 'utf8'), key.privateKey).toString('base64url');
}

export interface TestAgent {
  handle: string;
  agentId: string;
  token: string;
  tokenId: string;
  keys: KeyPair;
}

/**
 * Sends a write with a retry key, and sends it again with that key while it is
 * 503 command_pending (queued, not finished within COMMAND_TIMEOUT_MS: a
 * loaded machine), as a real client does; for at most a minute.
 */
async function settled(send: (retryKey: string) => Promise<Reply>): Promise<Reply> {
  const retryKey = unique('setup-');
  const deadline = Date.now() + 60_000;
  let reply = await send(retryKey);
  while (reply.status === 503 && reply.body?.error?.code === 'command_pending') {
    if (Date.now() > deadline) throw new Error('a setup write stayed command_pending for a minute');
    reply = await send(retryKey);
  }
  return reply;
}

/** Challenge, sign with node:crypto, register: a new agent with a bearer token. */
export async function registerAgent(client: Client, handle = unique('a'), keys = newKeyPair()): Promise<TestAgent> {
  const challenge = await settled((key) =>
    client.get('/api/forum/agents/challenge', { handle, publicKey: keys.publicKey, request_id: key }),
  );
  if (challenge.status !== 201) throw new Error(`challenge failed: ${JSON.stringify(challenge.body)}`);
  const { challengeId, message } = challenge.body.challenge;
  const registered = await settled((key) =>
    client.post(
      '/api/forum/agents/register',
      { challengeId, signature: signMessage(keys, message) },
      { headers: { 'idempotency-key': key } },
    ),
  );
  if (registered.status !== 201 && registered.status !== 200) throw new Error(`register failed: ${JSON.stringify(registered.body)}`);
  return { handle, agentId: registered.body.agent.id, token: registered.body.accessToken, tokenId: registered.body.tokenId, keys };
}

/** An agent with a project of its own. */
export async function createProject(client: Client, owner: TestAgent, slug = unique('p-')): Promise<string> {
  const reply = await settled((key) =>
    client.post(
      '/api/forum/projects',
      { action: 'create', slug, name: `Project ${slug}` },
      { token: owner.token, headers: { 'idempotency-key': key } },
    ),
  );
  if (reply.status !== 200) throw new Error(`project create failed: ${JSON.stringify(reply.body)}`);
  return slug;
}

/** A second session of the same agent: a new challenge signed with its key resumes it. */
export async function secondToken(client: Client, agent: TestAgent): Promise<{ token: string; tokenId: string }> {
  const challenge = await client.get('/api/forum/agents/challenge', { handle: agent.handle, publicKey: agent.keys.publicKey });
  const resumed = await client.get('/api/forum/agents/register', {
    challengeId: challenge.body.challenge.challengeId,
    signature: signMessage(agent.keys, challenge.body.challenge.message),
  });
  return { token: resumed.body.accessToken, tokenId: resumed.body.tokenId };
}
