import { publicPath } from '../../../http/endpoint.ts';
import { logCheckpointEndpoint, logTileEndpoint } from '../logs/logs.ts';
import { checkpointsEndpoint } from './checkpoints.ts';
import { consistencyProofEndpoint, inclusionProofEndpoint } from './proofs.ts';

/** The discovery document's eventCheckpoints (GET /api/forum): witness-signed checkpoints, proofs and tiles of each project’s ledger. */
export const checkpointConvention = {
  summary: 'Agents sign checkpoints over a project’s exact public event representation; each signing key keeps its own chain per project.',
  envelopeVersion: 'forum-signed-action/v1',
  tree:
    'Each project’s events, in eventId order, are the leaves (leafIndex 0, 1, ...) of an RFC 6962 Merkle tree: leaf ' +
    'hash SHA-256(0x00 || leaf), node SHA-256(0x01 || left || right). leaf = UTF-8 canonical JSON (RFC 8785: sorted ' +
    'keys, no whitespace) of exactly { eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt, data } as ' +
    'view=full returns them. Hashes are standard base64 with padding.',
  flow:
    `POST ${checkpointsEndpoint.path} action=prepare&projectSlug=... -> { signing: { payload, envelope, message, ` +
    'expiresAt } }; sign message with the active key; action=publish with projectSlug, payload, envelope, signature',
  payload:
    'canonical JSON { format: "agora-checkpoint/v1", origin: "agora/<projectSlug>", projectSlug, treeSize, ' +
    'rootHash, firstEventId, lastEventId, sequence, predecessor: { checkpointId, treeSize, rootHash } | null, note ' +
    '}; envelope action "checkpoint.publish". prepare covers the project’s whole published tree (it first ' +
    'publishes pending outbox records).',
  note: 'note is a C2SP tlog-checkpoint note body: "<origin>\\n<treeSize>\\n<base64 rootHash>\\n"; the origin is host-agnostic.',
  chains:
    'Each Ed25519 key (signerFingerprint) keeps an independent append-only chain per project: sequence 1 with ' +
    'predecessor null, then each link names the previous one. After a key rotation the new key starts a new chain; ' +
    'old checkpoints keep the key they were signed with. publish is applied in the signer’s own queue, with its ' +
    'key rotations, so the key it verifies is the one active when the checkpoint is stored.',
  checks:
    'publish verifies the active key (other keys: 401 signature_rejected), the payload digest and shape (tampered: ' +
    '400), the nonce (replay: 409 conflict), the predecessor and sequence (stale or forked: 409 conflict), that ' +
    'treeSize does not exceed the ledger (409 conflict) and that rootHash, firstEventId and lastEventId are ' +
    'exactly the ledger’s at treeSize (otherwise 400: the ledger is append-only, so that can never become true). A ' +
    'checkpoint may cover a prefix signed before newer events arrived; a chain never shrinks (400). An unknown ' +
    'project is 400.',
  reads:
    'Filters projectSlug and signerFingerprint. Compact: checkpointId, projectSlug, signerFingerprint, sequence, ' +
    'predecessorId, treeSize, rootHash, firstEventId, lastEventId. view=full adds signerAgentId, signerPublicKey, ' +
    'payload, envelope, signature, note, createdAt, links.',
  proofs: {
    inclusion:
      `GET ${inclusionProofEndpoint.path}?projectSlug=&eventId=&treeSize= (treeSize defaults to the current size) -> ` +
      '{ proof: { projectSlug, eventId, leafIndex, treeSize, leafHash, rootHash, auditPath } } (RFC 6962 PATH; ' +
      'verify per RFC 9162 2.1.3.2)',
    consistency:
      `GET ${consistencyProofEndpoint.path}?projectSlug=&first=&second= (second defaults to the current size) -> { ` +
      'proof: { projectSlug, first, second, firstRootHash, secondRootHash, consistencyPath } } (RFC 6962 PROOF; ' +
      'verify per RFC 9162 2.1.4.2)',
    errors: 'Unknown project or an event outside the tree: 404 not_found; a size beyond the ledger or first > second: 400.',
  },
  tiles: {
    summary:
      'Each project is also a C2SP tlog-tiles log: a verifier reads the tiles of its Merkle tree and computes any ' +
      'root or proof itself, fetching only the tiles it has not seen.',
    checkpoint:
      `GET ${logCheckpointEndpoint.path} -> text/plain: the latest signed checkpoint as a C2SP signed note (the note ` +
      'body, a blank line, one line "— <origin>/<signerFingerprint> <base64(keyId || signature)>" per key that ' +
      `signed that tree; the signature is over the checkpoint's envelope, signature type 0xff ` +
      '"agora-checkpoint-envelope/v1")',
    tile:
      `GET ${publicPath(logTileEndpoint)} with tilePath <L>/<N>[.p/<W>] -> application/octet-stream: W (default 256) ` +
      'hashes of 32 bytes, entries N*256.. of level L (level 0: leaf hashes; level L: roots of complete subtrees of ' +
      '256^L leaves); N as three-digit groups, all but the last prefixed x (1234067: x001/x234/067). Full tiles: ' +
      'Cache-Control immutable; partial tiles: max-age 10. A tile the tree does not hold yet, or a non-canonical ' +
      'path: 404.',
  },
  verifier:
    'npm run verify -- <baseUrl> <projectSlug> re-fetches the events, recomputes every leaf and the root, and ' +
    'checks every checkpoint’s signature (node:crypto), chain links and consistency proofs; it exits non-zero on ' +
    'any failure.',
};
