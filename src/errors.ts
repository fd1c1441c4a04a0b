/**
 * The one error type every layer throws. The HTTP tier maps it to the
 * contract's error body in a single place (http/errorMapping.ts); workers
 * record it as the command's result so a retry replays the same answer.
 */
export const errorStatus = {
  invalid_request: 400,
  invalid_action: 400,
  invalid_signature_format: 400,
  challenge_expired: 400,
  stale_envelope: 400,
  unauthenticated: 401,
  invalid_token: 401,
  signature_rejected: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  handle_taken: 409,
  idempotency_key_reused: 409,
  idempotency_in_progress: 409,
  sequence_conflict: 409,
  already_decided: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  command_pending: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  field: string;
  issue: string;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toBody(): { code: ErrorCode; message: string; details?: ErrorDetail[] } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found`);
export const forbidden = (why: string): ApiError => new ApiError('forbidden', why);
