import { z } from "zod";
import { computeEtag, conditionalJsonResponse } from "@/lib/http/etag";
import { parseQuery } from "@/lib/http/query";
import { readerIdentity } from "@/lib/auth/reader-checks";
import { readRoute } from "@/lib/http/route";
import { humanRevisionOf, MAX_WAIT_SECONDS, waitForHandoffChange, type MergedHandoff } from "@/lib/human/wait";
import { getMergedHandoff } from "@/lib/threads/queries";

/**
 * GET /api/v1/threads/{key}/handoff: the merged packet the next session reads.
 * Tagged with a strong ETag of the bytes served; `If-None-Match` revalidates (304).
 *
 * The waiting read (docs/decisions/019-waiting-read.md): with `after=<revision>`
 * (and optionally `after_packet=<packet id>`), 200 with the packet as soon as its
 * human revision passes `after` (or the active packet is another than
 * `after_packet`), waiting up to `wait` seconds (at most 300) for that; when the
 * wait ends with nothing new, 304 with the current ETag. Every answer carries
 * `baton-packet-id` and `baton-human-revision`. One reader may hold
 * MAX_WAITS_PER_READER waits per process (then 429); a wait whose reader loses
 * its access (token revoked, session ended, person disabled) ends with that
 * 401 or 403 within seconds (lib/auth/reader-checks.ts).
 */

const revision = z
  .string()
  .regex(/^\d{1,15}$/, "must be a human-section revision: a whole number, 0 or more")
  .transform(Number);
const seconds = z
  .string()
  .regex(/^\d{1,6}(\.\d{1,3})?$/, `must be a number of seconds, 0 to ${MAX_WAIT_SECONDS}`)
  .transform(Number)
  .refine((value) => value <= MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS} seconds; ask again to wait longer`);

const handoffQuerySchema = z
  .object({
    wait: seconds.optional(),
    after: revision.optional(),
    after_packet: z.string().min(1, "must be a packet id").max(200, "must be a packet id").optional(),
  })
  .superRefine((query, context) => {
    if (query.after === undefined && (query.wait !== undefined || query.after_packet !== undefined)) {
      context.addIssue({ code: "custom", path: ["after"], message: "is required with wait or after_packet: the human revision you last saw (0 for a new packet)" });
    }
  });

const handoffHeaders = (handoff: MergedHandoff) => ({
  "baton-packet-id": handoff.packetId,
  "baton-human-revision": String(humanRevisionOf(handoff)),
});

/** The wait ended with nothing new: the validators of the current representation, no body. */
function notModified(handoff: MergedHandoff): Response {
  const etag = computeEtag(JSON.stringify(handoff.body));
  return new Response(null, { status: 304, headers: { ...handoffHeaders(handoff), etag, "cache-control": "no-cache" } });
}

export const GET = readRoute<{ key: string }>(async ({ request, params, reader }) => {
  const query = parseQuery(request, handoffQuerySchema);
  if (query.after === undefined) {
    const handoff = await getMergedHandoff(params.key);
    return conditionalJsonResponse(request, handoff.body, handoffHeaders(handoff));
  }
  const outcome = await waitForHandoffChange({
    threadKey: params.key,
    after: query.after,
    afterPacket: query.after_packet,
    waitMs: (query.wait ?? 0) * 1000,
    signal: request.signal,
    reader: readerIdentity(request, reader),
  });
  if (!outcome.changed) return notModified(outcome.handoff);
  return conditionalJsonResponse(request, outcome.handoff.body, handoffHeaders(outcome.handoff));
});
