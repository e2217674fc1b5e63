/**
 * The one error type. Route handlers map `code` to an HTTP status in one place
 * (lib/http/respond.ts); messages tell the caller what to do next.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  unreadable_file: 400,
  invalid_encoding: 400,
  not_a_packet: 400,
  no_core_fields: 400,
  invalid_fields: 400,
  invalid_request: 400,
  json_too_deep: 400,
  invalid_markdown: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  misdirected_request: 421,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

// One symbol for every copy of this module: Next bundles lib/ separately into the
// server's instrumentation and each route, and work started by one copy (the ingest
// writer's queue, shared on globalThis) can fail a request served by another.
const BATON_ERROR = Symbol.for("baton.BatonError");

export class BatonError extends Error {
  /** `instanceof` recognises a BatonError from any copy of this module, not only this class object. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as { [BATON_ERROR]?: unknown })[BATON_ERROR] === true;
  }

  readonly [BATON_ERROR] = true;
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, details?: unknown, retryAfterSeconds?: number) {
    super(message);
    this.name = "BatonError";
    this.code = code;
    this.details = details;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody() {
    return { error: { code: this.code, message: this.message, details: this.details ?? null } };
  }
}
