import { apiRoute } from "@/lib/http/route";
import { assertJsonContentType, readBodyText } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { BATCH_MAX_BYTES, ingestRequestBody } from "@/lib/ingest/request";
import { announceArrival, type ArrivalTicket } from "@/lib/ingest/batch-writer";
import type { AuthenticatedToken } from "@/lib/auth/tokens";
import { BatonError } from "@/lib/errors";

const IDEMPOTENCY_KEY_MAX = 200;

async function storeRequest(request: Request, token: AuthenticatedToken, arrival: ArrivalTicket): Promise<Response> {
  assertJsonContentType(request);
  const key = request.headers.get("idempotency-key");
  if (key !== null && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
    throw new BatonError("invalid_request", `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters.`, {
      field: "Idempotency-Key",
    });
  }
  const { text, bytes } = await readBodyText(request, BATCH_MAX_BYTES);
  const { status, body } = await ingestRequestBody(text, bytes, {
    kind: request.headers.get("baton-source") === "cli" ? "cli" : "http",
    actor: `token:${token.name}`,
    idempotency: key ? { tokenId: token.id, key } : undefined,
    arrival,
  });
  return jsonResponse(body, status);
}

/**
 * POST /api/v1/packets: one packet, or a batch {"packets": [...]}. apiRoute
 * checks the token and its rate limit first: a refused request (401, 403, 429)
 * never takes an arrival ticket nor reads its body.
 */
export const POST = apiRoute("packets:write", async ({ request, token }) => {
  // Announced before the body is read, so that concurrent packets share a commit.
  const arrival = announceArrival();
  try {
    return await storeRequest(request, token, arrival);
  } finally {
    arrival.release();
  }
});
