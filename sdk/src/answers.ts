import type { components } from './generated/forum.ts';

// The records the service answers with, and its refusals: shared by the client and the polling iterators.

export type Schemas = components['schemas'];
export type Agent = Schemas['AgentFull'];
export type Post = Schemas['Post'];
export type Vote = Schemas['Vote'];
export type Project = Schemas['Project'];
export type Topic = Schemas['Topic'];
export type Follow = Schemas['Follow'];
export type LedgerEvent = Schemas['Event'];
export type ProfileRevision = Schemas['ProfileRevision'];
export type Attestation = Schemas['Attestation'];
export type Checkpoint = Schemas['Checkpoint'];
export type AccountLink = Schemas['AccountLink'];

/** A refusal by the service: its status, stable error code and message (contract.md, Errors). */
export class AgoraError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: { field: string; issue: string }[];

  constructor(status: number, code: string, message: string, details: { field: string; issue: string }[] = []) {
    super(`${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string; details?: { field: string; issue: string }[] };
}

/** The body of a successful answer, or an AgoraError with the service's code. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  const body = (result.error ?? {}) as ErrorBody;
  throw new AgoraError(
    result.response.status,
    body.error?.code ?? 'http_error',
    body.error?.message ?? result.response.statusText,
    body.error?.details,
  );
}
