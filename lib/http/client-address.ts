import "server-only";
import ipaddr from "ipaddr.js";

// The address a request came from, for the sign-in throttle: the socket's, stamped by our own hook
// because Next lets a direct client write X-Forwarded-For; behind proxies, BATON_TRUSTED_PROXY_HOPS
// (docs/decisions/029-sign-in-throttling.md, item 2).
export const CLIENT_ADDRESS_HEADER = "x-baton-client-address";

const MAX_ADDRESS_CHARS = 100;

/** One client's key: IPv4 as is, IPv6 by its /64; anything else lower-cased and cut short. */
export function normaliseAddress(raw: string): string {
  let text = raw.trim();
  // [v6]:port and v4:port as some proxies write them.
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"));
  const zoneless = text.replace(/%.*$/, "");
  if (ipaddr.isValid(zoneless)) {
    const parsed = ipaddr.process(zoneless);
    if (parsed.kind() === "ipv4") return parsed.toString();
    const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
    return `${parts.map((part) => part.toString(16)).join(":")}::/64`;
  }
  return text.toLowerCase().slice(0, MAX_ADDRESS_CHARS);
}

function forwardedEntries(request: Request): string[] {
  const header = request.headers.get("x-forwarded-for");
  if (!header) return [];
  return header
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}

let warnedMissing = false;

/**
 * The client's address for `request`, normalised, or null when nothing says
 * (then the caller decides; sign-in falls back to Next's `X-Forwarded-For`).
 */
export function clientAddressOf(request: Request, trustedProxyHops: number): string | null {
  const socket = request.headers.get(CLIENT_ADDRESS_HEADER)?.trim() || null;
  if (trustedProxyHops > 0) {
    const entries = forwardedEntries(request);
    if (entries.length >= trustedProxyHops) return normaliseAddress(entries[entries.length - trustedProxyHops]!);
  }
  if (socket) return normaliseAddress(socket);
  // The server's stamp is missing (instrumentation.ts did not run: a server other than
  // Next's own?). Next's X-Forwarded-For is the socket unless the client wrote one: the
  // right-most entry is the best left. Said once in the log.
  const entries = forwardedEntries(request);
  if (!warnedMissing) {
    warnedMissing = true;
    console.warn(`baton: requests carry no ${CLIENT_ADDRESS_HEADER}; the sign-in throttle falls back to X-Forwarded-For, which a client can write`);
  }
  return entries.length ? normaliseAddress(entries[entries.length - 1]!) : null;
}

interface StampableRequest {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string } | null;
}

/** Overwrites the request's client-address header with its socket's address (a client's own value never survives). */
export function stampClientAddress(request: StampableRequest): void {
  const address = request.socket?.remoteAddress;
  if (address) request.headers[CLIENT_ADDRESS_HEADER] = address;
  else delete request.headers[CLIENT_ADDRESS_HEADER];
}

const installed = Symbol.for("baton.clientAddressHeader");

/**
 * Makes every HTTP(S) server of this process stamp each request with its socket's
 * address before any listener (Next's) sees it. Idempotent.
 */
export async function installClientAddressHeader(): Promise<void> {
  const http = await import("node:http");
  const https = await import("node:https");
  for (const Server of [http.Server, https.Server]) {
    const prototype = Server.prototype as unknown as { emit: (event: string | symbol, ...args: unknown[]) => boolean; [installed]?: true };
    if (prototype[installed]) continue;
    const emit = prototype.emit;
    prototype.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
      if (event === "request" || event === "checkContinue" || event === "checkExpectation") stampClientAddress(args[0] as StampableRequest);
      return emit.call(this, event, ...args);
    };
    prototype[installed] = true;
  }
}
