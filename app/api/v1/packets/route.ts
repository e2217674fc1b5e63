import { packetContentType, readBodyText } from "@/lib/http/body";
import { defineRoute, reply } from "@/lib/http/route";
import { BATCH_MAX_BYTES, ingestRequestBody } from "@/lib/ingest/request";
import { announceArrival, type ArrivalTicket } from "@/lib/ingest/batch-writer";
import type { AuthenticatedToken } from "@/lib/auth/tokens";
import { BatonError } from "@/lib/core/errors";
import { ingestAnswerDto } from "@/lib/views/threads/dto";
import { withAnsweredFlags } from "@/lib/views/threads/flagged";

const IDEMPOTENCY_KEY_MAX = 200;

async function storeRequest(request: Request, token: AuthenticatedToken, arrival: ArrivalTicket) {
  const format = packetContentType(request);
  const key = request.headers.get("idempotency-key");
  if (key !== null && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
    throw new BatonError("invalid_request", `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters.`, {
      field: "Idempotency-Key",
    });
  }
  // The body is read here, not by the wrapper: packets are accepted liberally
  // (decision 005) and counted against the packet and batch limits as they arrive.
  const { text, bytes } = await readBodyText(request, BATCH_MAX_BYTES);
  const { status, body } = await ingestRequestBody(text, bytes, {
    kind: request.headers.get("baton-source") === "cli" ? "cli" : "http",
    actor: `token:${token.name}`,
    project: token.project ?? undefined,
    idempotency: key ? { tokenId: token.id, key } : undefined,
    arrival,
  }, format);
  // The flags a card shows, the same as every other view's (lib/board/flags.ts).
  if ("results" in body) {
    const flagged = await withAnsweredFlags(body.results.flatMap((item) => ("packet_id" in item ? [item] : [])));
    const byIndex = new Map(flagged.map((item) => [item.index, item]));
    return reply({ results: body.results.map((item) => ("packet_id" in item ? byIndex.get(item.index)! : item)) }, { status });
  }
  const [flagged] = await withAnsweredFlags([body]);
  return reply(flagged!, { status });
}

/**
 * The token and its rate limit are checked first: a refused request (401,
 * 403, 429) never takes an arrival ticket nor reads its body.
 */
export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/packets",
  summary: "Stores one packet, or a batch `{\"packets\": [...]}` (at most 100 packets and 8 MiB; each packet at most 1 MiB).",
  auth: { kind: "token", scope: "packets:write" },
  headers: {
    "Idempotency-Key": `optional, 1 to ${IDEMPOTENCY_KEY_MAX} characters: the same key with the same body answers as the first time; with another body, 422`,
    "Baton-Source": "optional; `cli` marks the packet as pushed by `baton push`",
  },
  body: {
    raw: "a handoff packet (docs/contract.md, docs/packet.schema.json); a packet with the verdict reports its pointers name, `{\"packet\": {...}, \"reports\": [{\"ref\": \"outputs/verification/T-1.json\", \"report\": {...}}]}` (docs/contract.md#reports-sent-with-a-packet); or a batch `{\"packets\": [...]}` of either; or, with `Content-Type: text/markdown`, one Markdown handoff (docs/contract.md#markdown-handoffs)",
  },
  response: {
    kind: "json",
    status: [201, 200, 207],
    schema: ingestAnswerDto,
    description: "201 for a new packet, 200 with `duplicate: true` for known content, 207 for a batch (one result per item, each with its own status)",
  },
  errors: ["invalid_json", "invalid_request", "not_a_packet", "no_core_fields", "invalid_fields", "json_too_deep", "invalid_markdown", "invalid_encoding", "idempotency_key_reused", "unsupported_media_type", "payload_too_large", "request_timeout"],
  handler: async ({ request, token }) => {
    // Announced before the body is read, so that concurrent packets share a commit.
    const arrival = announceArrival();
    try {
      return await storeRequest(request, token, arrival);
    } finally {
      arrival.release();
    }
  },
});
