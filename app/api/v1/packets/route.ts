import { apiRoute } from "@/lib/http/route";
import { assertJsonContentType, readBodyText } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { BATCH_MAX_BYTES, ingestRequestBody } from "@/lib/ingest/request";
import { BatonError } from "@/lib/errors";

const IDEMPOTENCY_KEY_MAX = 200;

/** POST /api/v1/packets: one packet, or a batch {"packets": [...]}. */
export const POST = apiRoute("packets:write", async ({ request, token }) => {
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
  });
  return jsonResponse(body, status);
});
