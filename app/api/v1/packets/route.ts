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

/** POST /api/v1/packets: one packet, or a batch {"packets": [...]}. */
export async function POST(request: Request, segment: { params: Promise<Record<string, never>> }): Promise<Response> {
  // Announced before the body is read, so that concurrent packets share a commit.
  const arrival = announceArrival();
  try {
    return await apiRoute("packets:write", ({ token }) => storeRequest(request, token, arrival))(request, segment);
  } finally {
    arrival.release();
  }
}
