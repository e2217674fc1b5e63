import { toBatonError } from "../db/errors";

export { toBatonError };

/** Below this many bytes an answer is not worth compressing (the compression middleware's own threshold). */
const COMPRESS_FROM_BYTES = 1024;

/** JSON responses; the one place where errors become HTTP statuses and bodies. */
export function jsonResponse(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  const text = JSON.stringify(body);
  // Next gzips every route answer, however small (it drops the Content-Length that would let it
  // see the size); no-transform keeps a heartbeat's or a packet's small answer out of a gzip
  // stream of its own (docs/decisions/087-small-answers-uncompressed.md).
  const cacheControl = Buffer.byteLength(text) < COMPRESS_FROM_BYTES ? "no-store, no-transform" : "no-store";
  return new Response(text, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": cacheControl, ...headers },
  });
}

/** A file the browser shows (`inline`) or saves (`attachment`) under `filename`; never cached, never sniffed into another type. */
export function fileResponse(body: string, { contentType, filename, disposition }: { contentType: string; filename: string; disposition: "inline" | "attachment" }): Response {
  return new Response(body, {
    headers: {
      "content-type": `${contentType}; charset=utf-8`,
      "content-disposition": `${disposition}; filename="${filename}"`,
      "cache-control": "no-store",
      // Agent-written text: a browser must never sniff it into HTML.
      "x-content-type-options": "nosniff",
    },
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
