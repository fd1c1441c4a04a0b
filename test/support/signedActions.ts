import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Point } from '@noble/ed25519';
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
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const encode = (value: unknown): string => Buffer.from(canonical(value), 'utf8').toString('base64url');
export const decode = (text: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;

/** action=prepare; throws unless 200. */
export async function prepare(
  client: Client,
  path: string,
  agent: TestAgent,
  fields: Record<string, unknown>,
): Promise<Reply & { signing: Signing }> {
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
export function forge(
  signing: Signing,
  keys: KeyPair,
  change: {
    payload?: (p: Record<string, unknown>) => Record<string, unknown>;
    envelope?: (e: Record<string, unknown>) => Record<string, unknown>;
  },
): Signed {
  const payload = (change.payload ?? ((p) => p))(decode(signing.payload));
  const digest = createHash('sha256').update(canonical(payload)).digest('base64url');
  const envelope = (change.envelope ?? ((e) => e))({ ...decode(signing.envelope), payloadSha256: digest });
  return { payload: encode(payload), envelope: encode(envelope), signature: signMessage(keys, canonical(envelope)) };
}

/** Dual-signed key rotation; returns the new key pair. */
export async function rotateKey(client: Client, agent: TestAgent, extra: Record<string, string> = {}): Promise<KeyPair> {
  const next = newKeyPair();
  const challenge = await client.post(
    '/api/forum/agents/key-rotation',
    { action: 'challenge', newPublicKey: next.publicKey },
    { token: agent.token },
  );
  if (challenge.status !== 200) throw new Error(`rotation challenge failed: ${JSON.stringify(challenge.body)}`);
  const { challengeId, message } = challenge.body.challenge;
  const done = await client.post(
    '/api/forum/agents/key-rotation',
    { action: 'complete', challengeId, oldSignature: signMessage(agent.keys, message), newSignature: signMessage(next, message), ...extra },
    { token: agent.token },
  );
  if (done.status !== 200) throw new Error(`rotation failed: ${JSON.stringify(done.body)}`);
  return next;
}

/** A code as the accounts service mints it (contract.md, Account links), with node:crypto. */
export function accountCode(secret: string, claims: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;
/** A point of order 8 (libsodium's small-order blocklist). */
const ORDER_8_POINT = '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05';
const littleEndian = (bytes: Uint8Array): bigint => BigInt(`0x${Buffer.from(bytes).reverse().toString('hex') || '0'}`);

/**
 * A signature by `keys` over `message` whose R carries an order-8 component:
 * a cofactored (ZIP-215) check accepts it, the strict RFC 8032 check of
 * node:crypto (and so of every witness using it) refuses it. Only the key
 * holder can make one, so it tests the verifier, not the key.
 */
export function torsionSignature(keys: KeyPair, message: string): string {
  const seed = Buffer.from(keys.privateKey.export({ format: 'jwk' }).d as string, 'base64url');
  const head = createHash('sha512').update(seed).digest().subarray(0, 32);
  head[0]! &= 248;
  head[31]! &= 127;
  head[31]! |= 64;
  const r = (littleEndian(randomBytes(64)) % (GROUP_ORDER - 1n)) + 1n;
  const rBytes = Point.BASE.multiply(r)
    .add(Point.fromBytes(Buffer.from(ORDER_8_POINT, 'hex')))
    .toBytes();
  const k =
    littleEndian(createHash('sha512').update(rBytes).update(Buffer.from(keys.publicKey, 'base64url')).update(message, 'utf8').digest()) %
    GROUP_ORDER;
  const s = (r + k * littleEndian(head)) % GROUP_ORDER;
  return Buffer.concat([rBytes, Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse()]).toString('base64url');
}
