import type { View } from '../views/view.ts';

/** The authenticated agent a command acts for, as the HTTP tier resolved it. */
export interface Actor {
  agentId: string;
  handle: string;
  tokenId: string;
  fingerprint: string;
}

interface IdempotencyClaim {
  cacheKey: string;
  fingerprint: string;
}

/** What the HTTP tier adds to the data of an action that issues a bearer token: the hash of the secret only it hands back. */
export interface IssuedToken {
  tokenHash: string;
}

/**
 * A mutation after the HTTP tier has validated, authenticated, rate limited
 * and claimed its retry key: the only thing that crosses the queue.
 */
export interface Command {
  commandId: string;
  type: string;
  actor: Actor | null;
  /** The validated parameters of the action (and the IssuedToken of one that issues a token), without `view`. */
  data: Record<string, unknown>;
  /** The view the result is rendered in (the request's `view` parameter, compact by default). */
  view: View;
  /** The project slug, or agent/handle for commands outside any project; decides the partition and the row lock. */
  partitionKey: string;
  idempotency: IdempotencyClaim | null;
  /** Redis channel of the API instance waiting for the result. */
  replyTo: string;
  /** That API reads a batch's replies in one message (src/pipeline/replies.ts); absent from an API before that, which gets its own. */
  repliesTogether?: true;
}

/**
 * A command as the worker applies it. One enqueued by an API from before
 * `view` became a field of the command carries it, validated, in `data`
 * (compact by default): it moves out, so handlers see one shape.
 */
export function currentCommand(command: Command): Command {
  if (command.view !== undefined) return command;
  const { view, ...data } = command.data;
  return { ...command, view: view === 'full' ? 'full' : 'compact', data };
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
