import { authenticateBearer, type AuthenticatedToken } from "./tokens";
import { BatonError } from "../errors";

/** Who is reading the board's data (the board API, the live stream, the thread page's downloads). */
export type ReadViewer = { kind: "token"; token: AuthenticatedToken } | { kind: "same-origin-browser" };

/**
 * THE one place that decides who may read the board's data: GET /api/v1/board,
 * GET /api/v1/stream and the thread page's downloads. Swap its body when
 * sign-in exists.
 *
 * - `Authorization: Bearer <token>` with the scope packets:read: accepted
 *   (a bad or revoked token is refused with 401/403, whatever else is sent).
 * - No Authorization header, `Sec-Fetch-Site: same-origin`: accepted.
 *   TEMPORARY, until sign-in exists (issue 4): browsers' EventSource cannot
 *   send an Authorization header, and the board's pages have no session yet.
 *   Browsers set Sec-Fetch-Site themselves (a page on another site cannot
 *   pretend to be same-origin), but ANY non-browser client can send the header,
 *   so for now the ledger stream is readable by whoever can reach the server.
 *   Issue 4 replaces this branch with a session-cookie check.
 * - Anything else: 401.
 */
export async function authoriseRead(request: Request): Promise<ReadViewer> {
  const authorization = request.headers.get("authorization");
  if (authorization) {
    return { kind: "token", token: await authenticateBearer(authorization, "packets:read") };
  }
  if (request.headers.get("sec-fetch-site") === "same-origin") {
    return { kind: "same-origin-browser" };
  }
  throw new BatonError(
    "unauthenticated",
    "Send a valid API token with the scope packets:read as `Authorization: Bearer <token>` (create one with `baton token create`), or use Baton's own pages.",
  );
}
