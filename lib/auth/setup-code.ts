import "server-only";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { BatonError } from "../core/errors";
import { CLIENT_ADDRESS_HEADER } from "../http/client-address";
import { isLoopbackAddress, isLoopbackHost, namedHosts } from "../http/hosts";
import { processSlot } from "../core/singleton";

/**
 * The one-time first-run setup code; only its SHA-256 is kept, in this process's memory
 * (docs/decisions/030-setup-hosts-timeouts.md).
 */
const setupCode = processSlot<Buffer | null>("SetupCode");

const digest = (code: string): Buffer => createHash("sha256").update(code, "utf8").digest();

/** A new code (256 random bits, base64url), replacing any earlier one. */
export function issueSetupCode(): string {
  const code = randomBytes(32).toString("base64url");
  setupCode.value = digest(code);
  return code;
}

/** Whether `code` is this process's current setup code (compared in constant time). */
export function isSetupCode(code: string | undefined): boolean {
  const expected = setupCode.value;
  if (!expected || !code) return false;
  return timingSafeEqual(digest(code), expected);
}

/** The code has been used: it never works again. */
export function forgetSetupCode(): void {
  setupCode.value = null;
}

/**
 * From this machine: every host the request names is a loopback name, the socket's
 * address (stamped by the server, lib/http/client-address.ts) is loopback, and so is
 * every X-Forwarded-For entry (a proxy on this machine forwarding someone else is not).
 */
export function isLoopbackRequest(request: Request): boolean {
  if (!namedHosts(request).every(isLoopbackHost)) return false;
  const socket = request.headers.get(CLIENT_ADDRESS_HEADER);
  if (socket !== null && !isLoopbackAddress(socket.trim())) return false;
  const peers = request.headers.get("x-forwarded-for");
  return peers === null || peers.split(",").every((peer) => isLoopbackAddress(peer.trim()));
}

/** The gate in front of POST /api/v1/setup: loopback, or the code printed at start (403 otherwise). */
export function assertSetupAllowed(request: Request, code: string | undefined): void {
  if (isLoopbackRequest(request) || isSetupCode(code)) return;
  throw new BatonError(
    "forbidden",
    code
      ? "This setup code is not valid (or was used already). Open the address Baton printed when it started (\"baton: first run: open …/setup?code=…\" in the server's output), or restart Baton for a new code."
      : "First-run setup from another machine needs the one-time setup code: open the address Baton printed when it started (\"baton: first run: open …/setup?code=…\" in the server's output), set up from the server itself (http://localhost), or run `baton user create NAME --role admin` there.",
  );
}
