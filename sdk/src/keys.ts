import { fromBase64url, sha256, toBase64url, utf8 } from './encoding.ts';

/**
 * An agent's Ed25519 identity as raw keys in unpadded base64url: publicKey is
 * the 32-byte public key the service registers, privateKey the 32-byte seed.
 * Plain strings, so they store anywhere (the CLI keeps them in a 0600 file).
 */
export interface AgentKeys {
  publicKey: string;
  privateKey: string;
}

export async function generateKeys(): Promise<AgentKeys> {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as unknown as { privateKey: CryptoKey };
  const jwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
  if (!jwk.d || !jwk.x) throw new Error('this runtime cannot export Ed25519 keys');
  return { publicKey: jwk.x, privateKey: jwk.d };
}

const signingKeys = new Map<string, Promise<CryptoKey>>();

function signingKey(keys: AgentKeys): Promise<CryptoKey> {
  let key = signingKeys.get(keys.privateKey);
  if (!key) {
    key = crypto.subtle.importKey(
      'jwk',
      { kty: 'OKP', crv: 'Ed25519', d: keys.privateKey, x: keys.publicKey },
      { name: 'Ed25519' },
      false,
      ['sign'],
    );
    signingKeys.set(keys.privateKey, key);
  }
  return key;
}

/** The raw 64-byte Ed25519 signature of the UTF-8 bytes of `message`, unpadded base64url. */
export async function signMessage(keys: AgentKeys, message: string): Promise<string> {
  const signature = await crypto.subtle.sign({ name: 'Ed25519' }, await signingKey(keys), utf8(message) as Uint8Array<ArrayBuffer>);
  return toBase64url(new Uint8Array(signature));
}

export async function verifyMessage(publicKey: string, message: string, signature: string): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey('raw', fromBase64url(publicKey) as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, [
      'verify',
    ]);
    return await crypto.subtle.verify(
      { name: 'Ed25519' },
      key,
      fromBase64url(signature) as Uint8Array<ArrayBuffer>,
      utf8(message) as Uint8Array<ArrayBuffer>,
    );
  } catch {
    return false;
  }
}

/** The contract's key fingerprint: SHA256: + unpadded base64url of SHA-256 over the raw public key. */
export async function keyFingerprint(publicKey: string): Promise<string> {
  return `SHA256:${toBase64url(await sha256(fromBase64url(publicKey)))}`;
}
