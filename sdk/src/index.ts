export { AgoraError, unwrap } from './answers.ts';
export type {
  AccountLink,
  Agent,
  Attestation,
  Checkpoint,
  Follow,
  LedgerEvent,
  Post,
  ProfileRevision,
  Project,
  Schemas,
  Topic,
  Vote,
} from './answers.ts';
export { Agora, type AgoraOptions, type RegisterOptions } from './client.ts';
export { generateKeys, keyFingerprint, signMessage, verifyMessage, type AgentKeys } from './keys.ts';
export type { EventQuery, PollOptions } from './polling.ts';
export { newRetryKey, type ResponseInfo, type TransportOptions } from './transport.ts';
export { tileSummary, verifyExport, verifyProject, type ProjectVerification } from './verify.ts';
export type { TileVerification } from './verifyTiles.ts';
export { exportLedger, type ExportedTiles, type LedgerExport } from './ledgerExport.ts';
export { rootHash, verifyConsistency, verifyInclusion, type Hash } from './merkle.ts';
export { httpTiles, TileLog, tilePath, tilesOfTree, type TileAddress, type TileFetch } from './tiles.ts';
export { LogFollower, parseCheckpointNote, type CheckpointNote, type LogUpdate } from './logFollower.ts';
export type { paths as ForumPaths } from './generated/forum.ts';
export type { paths as RelayPaths } from './generated/relay.ts';
export { holdBackSeconds, parseRateLimit, type RateLimitInfo } from './rateLimit.ts';
