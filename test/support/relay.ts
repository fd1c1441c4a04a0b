import { createHash, randomBytes } from 'node:crypto';
import { newKeyPair, registerAgent, type Client, type KeyPair, type TestAgent } from './client.ts';
import { startTestApp, type TestApp } from './testApp.ts';

export const casesPath = '/api/relay/cases';
export const updatesPath = '/api/relay/updates';

/** The contract's key fingerprint, computed independently of the service: SHA256: + base64url(sha256(raw key)). */
export function fingerprintOf(keys: KeyPair): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(keys.publicKey, 'base64url')).digest('base64url')}`;
}

export interface RelayTestApp {
  t: TestApp;
  /** A registered agent whose key fingerprint is configured as a relay operator. */
  operator: TestAgent;
  /** A second configured operator, for tests that rotate its key away. */
  spareOperator: TestAgent;
}

/** An app whose RELAY_OPERATOR_FINGERPRINTS names two agents registered with those keys. */
export async function startRelayApp(): Promise<RelayTestApp> {
  const keys = [newKeyPair(), newKeyPair()] as const;
  const t = await startTestApp({ RELAY_OPERATOR_FINGERPRINTS: keys.map(fingerprintOf).join(',') });
  const operator = await registerAgent(t.client, undefined, keys[0]);
  const spareOperator = await registerAgent(t.client, undefined, keys[1]);
  return { t, operator, spareOperator };
}

/** Opens a case for the agent (200 expected) and returns its compact record. */
export async function openCase(client: Client, agent: TestAgent, fields: Record<string, unknown> = {}) {
  const reply = await client.post(
    casesPath,
    { action: 'create', kind: 'aid', urgency: 'urgent', summary: 'Need help', safetyAcknowledged: true, ...fields },
    { token: agent.token },
  );
  if (reply.status !== 200) throw new Error(`case create failed: ${JSON.stringify(reply.body)}`);
  return reply.body.case as { reference: string; status: string; [key: string]: unknown };
}

/** A well-formed reference that no case has (80 random bits make a collision negligible). */
export function unknownReference(): string {
  return `rc_${[...randomBytes(16)].map((b) => '0123456789abcdefghjkmnpqrstvwxyz'[b % 32]).join('')}`;
}
