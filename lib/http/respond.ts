import { toBatonError } from "../db/errors";

export { toBatonError };

/** JSON responses; the one place where errors become HTTP statuses and bodies. */
export function jsonResponse(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
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
