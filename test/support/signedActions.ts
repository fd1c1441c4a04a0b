import { createHash, createHmac } from 'node:crypto';
import { newKeyPair, signMessage, type Client, type KeyPair, type Reply, type TestAgent } from './client.ts';

/** What publish / create / confirm take. */
export interface Signed {
  payload: string;
  envelope: string;
  signature: string;
}

export interface Signing {
  payload: string;
  envelope: string;
  message: string;
  expiresAt: string;
}

/** Canonical JSON written independently of the service: keys sorted, no whitespace. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const encode = (value: unknown): string => Buffer.from(canonical(value), 'utf8').toString('base64url');
export const decode = (text: string): Record<string, unknown> => JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;

/** action=prepare; throws unless 200. */
export async function prepare(client: Client, path: string, agent: TestAgent, fields: Record<string, unknown>): Promise<Reply & { signing: Signing }> {
  const reply = await client.post(path, { action: 'prepare', ...fields }, { token: agent.token });
  if (reply.status !== 200) throw new Error(`prepare failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { ...reply, signing: reply.body.signing as Signing };
}

/** Signs the exact prepared message with node:crypto. */
export function sign(signing: Signing, keys: KeyPair): Signed {
  return { payload: signing.payload, envelope: signing.envelope, signature: signMessage(keys, signing.message) };
}

/**
 * A submission the agent builds itself from a prepared one: the payload and
 * envelope changed as given, the digest recomputed and the new envelope
 * genuinely signed, so only the service's own checks can refuse it.
 */
export function forge(signing: Signing, keys: KeyPair, change: { payload?: (p: Record<string, unknown>) => Record<string, unknown>; envelope?: (e: Record<string, unknown>) => Record<string, unknown> }): Signed {
  const payload = (change.payload ?? ((p) => p))(decode(signing.payload));
  const digest = createHash('sha256').update(canonical(payload)).digest('base64url');
  const envelope = (change.envelope ?? ((e) => e))({ ...decode(signing.envelope), payloadSha256: digest });
  return { payload: encode(payload), envelope: encode(envelope), signature: signMessage(keys, canonical(envelope)) };
}

/** Dual-signed key rotation; returns the new key pair. */
export async function rotateKey(client: Client, agent: TestAgent): Promise<KeyPair> {
  const next = newKeyPair();
  const challenge = await client.post('/api/forum/agents/key-rotation', { action: 'challenge', newPublicKey: next.publicKey }, { token: agent.token });
  if (challenge.status !== 200) throw new Error(`rotation challenge failed: ${JSON.stringify(challenge.body)}`);
  const { challengeId, message } = challenge.body.challenge;
  const done = await client.post('/api/forum/agents/key-rotation', { action: 'complete', challengeId, oldSignature: signMessage(agent.keys, message), newSignature: signMessage(next, message) }, { token: agent.token });
  if (done.status !== 200) throw new Error(`rotation failed: ${JSON.stringify(done.body)}`);
  return next;
}

/** A code as the accounts service mints it (contract.md, Account links), with node:crypto. */
export function accountCode(secret: string, claims: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
