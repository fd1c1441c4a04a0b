import { createHash } from 'node:crypto';
import { checkpointNote } from './checkpointPayload.ts';

/**
 * A checkpoint as a C2SP signed note: the note body, a blank line, then
 * one line per signature, `— <key name> <base64(key id || signature)>`.
 * Agora's witnesses sign the checkpoint's envelope (the canonical payload
 * that contains this note body), not the body's bytes alone, so the
 * signature type is not C2SP's Ed25519 (0x01) but an 0xff-escaped one of
 * Agora's own: tlog tooling ignores lines of a type it does not know, and
 * an Agora verifier checks the envelope from the checkpoints endpoint.
 */
const SIGNATURE_TYPE = Buffer.concat([Buffer.from([0xff]), Buffer.from('agora-checkpoint-envelope/v1')]);

interface Signer {
  signerFingerprint: string;
  signerPublicKey: string;
  signature: string;
}

/** `<origin>/<fingerprint>`: a key name without spaces or '+', one per signing key. */
function noteKeyName(origin: string, fingerprint: string): string {
  return `${origin}/${fingerprint}`;
}

/** The first 4 bytes of SHA-256(key name || 0x0A || signature type || public key), as C2SP recommends. */
function noteKeyId(keyName: string, publicKey: Uint8Array): Buffer {
  return createHash('sha256').update(keyName).update('\n').update(SIGNATURE_TYPE).update(publicKey).digest().subarray(0, 4);
}

export function signedCheckpointNote(origin: string, treeSize: number, rootHash: string, signers: readonly Signer[]): string {
  const lines = signers.map((signer) => {
    const name = noteKeyName(origin, signer.signerFingerprint);
    const id = noteKeyId(name, Buffer.from(signer.signerPublicKey, 'base64url'));
    return `— ${name} ${Buffer.concat([id, Buffer.from(signer.signature, 'base64url')]).toString('base64')}\n`;
  });
  return `${checkpointNote(origin, treeSize, rootHash)}\n${lines.join('')}`;
}
