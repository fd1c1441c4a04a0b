/**
 * The one place that reaches into pg past its API, where the API has no
 * door: a client's socket. pg hands each statement's five protocol messages
 * (Parse, Bind, Describe, Execute, Sync) to the socket as it is asked, and a
 * pipelined client is asked at once, so a trip of several statements would
 * leave in several writes; corked while they are handed over, it leaves in
 * one. If an upgrade moves the socket or stops writing to it as a statement
 * is queued, test/db/pgInternals.test.ts fails.
 */

/** What of a pg client this relies on: its connection's socket. */
interface ClientSocket {
  connection: { stream: { cork(): void; uncork(): void } };
}

/** Runs `send`, which hands statements to a pg client, with the client's socket corked: what it wrote leaves together when it returns. */
export function sentTogether<T>(client: object, send: () => T): T {
  const { stream } = (client as ClientSocket).connection;
  stream.cork();
  try {
    return send();
  } finally {
    stream.uncork();
  }
}
