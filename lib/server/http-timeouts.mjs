// Preloaded into `next start` (scripts/start.ts): Next lets Baton set none of its server's timeouts,
// so http.createServer gets them here, cutting a slowloris client at 10 s instead of Node's 60-90 s
// (docs/decisions/036-request-header-timeout.md).
import http from "node:http";

const HEADERS_TIMEOUT_MS = 10_000;
const CHECK_INTERVAL_MS = 1_000;
// The whole request: the headers, then the body within BATON_BODY_TIMEOUT_MS (lib/http/body.ts
// answers 408 itself; this bounds a body the app never reads). scripts/start.ts has already
// checked the variable (lib/server/config.ts); 15 s is its default there.
const bodyTimeoutMs = Number(process.env.BATON_BODY_TIMEOUT_MS || 15_000);
const REQUEST_TIMEOUT_MS = HEADERS_TIMEOUT_MS + bodyTimeoutMs + 30_000;

const createServer = http.createServer;
// The default export is the module Next gets from require("http"): the change is seen there.
http.createServer = function createServerWithTimeouts(options, listener) {
  if (typeof options === "function" || options === undefined) return createServerWithTimeouts.call(this, {}, options);
  return createServer.call(
    this,
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: CHECK_INTERVAL_MS, ...options },
    listener,
  );
};
