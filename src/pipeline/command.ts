/** The authenticated agent a command acts for, as the HTTP tier resolved it. */
export interface Actor {
  agentId: string;
  handle: string;
  tokenId: string;
  fingerprint: string;
}

export interface IdempotencyClaim {
  cacheKey: string;
  fingerprint: string;
}

/**
 * A mutation after the HTTP tier has validated, authenticated, rate limited
 * and claimed its retry key: the only thing that crosses the queue.
 */
export interface Command {
  commandId: string;
  type: string;
  actor: Actor | null;
  data: Record<string, unknown>;
  /** The project slug, or agent/handle for commands outside any project; decides the partition and the row lock. */
  partitionKey: string;
  idempotency: IdempotencyClaim | null;
  /** Redis channel of the API instance waiting for the result. */
  replyTo: string;
}

/** What a command answered: the HTTP status and the body without the envelope. */
export interface CommandResult {
  status: number;
  body: Record<string, unknown>;
}

/** One queue job: commands of one partition, applied in order in one transaction. */
export interface CommandBatch {
  commands: Command[];
}
