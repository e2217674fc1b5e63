import { connectionLostError, isConnectionLost } from "../db-errors";
import { BatonError } from "../errors";

/** JSON responses; the one place where errors become HTTP statuses and bodies. */
export function jsonResponse(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

export function toBatonError(error: unknown): BatonError {
  if (error instanceof BatonError) return error;
  // A database restart or a dropped connection: the pool connects afresh, the client retries.
  if (isConnectionLost(error)) return connectionLostError(error);
  // Never echo internals (or a secret inside a driver message) to the caller.
  console.error("baton: unexpected error", error instanceof Error ? error.stack : error);
  return new BatonError("internal", "Baton failed to handle this request; it was logged on the server.");
}

export function errorResponse(error: unknown): Response {
  const batonError = toBatonError(error);
  const headers: Record<string, string> = {};
  if (batonError.retryAfterSeconds !== undefined) headers["retry-after"] = String(batonError.retryAfterSeconds);
  if (batonError.status === 401) headers["www-authenticate"] = 'Bearer realm="baton"';
  // The rest of a too-large (or too slow) body is left unread: a keep-alive client must not send its next request after it.
  if (batonError.code === "payload_too_large" || batonError.code === "request_timeout") headers.connection = "close";
  return jsonResponse(batonError.toBody(), batonError.status, headers);
}
