import { z } from "zod";
import { readerIdentity } from "@/lib/auth/reader-checks";
import { defineRoute, reply } from "@/lib/http/route";
import { humanSectionSchema } from "@/lib/human/section";
import { threadWorkDto } from "@/lib/integrations/dto";
import { humanRevisionOf, MAX_WAIT_SECONDS, waitForHandoffChange, type MergedHandoff } from "@/lib/human/wait";
import { getMergedHandoff } from "@/lib/views/threads/packet-reads";

// The merged packet the next session reads, with a strong ETag; with `after`, the waiting read
// (docs/decisions/019-waiting-read.md), capped and re-checked per reader (docs/decisions/026-reader-rechecks.md).

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

/** The agent's fields exactly as received, plus Baton's human section and the code host's CI and review. */
const mergedHandoffSchema = z.looseObject({
  human: humanSectionSchema,
  ci: threadWorkDto.shape.ci.unwrap().optional(),
  review: threadWorkDto.shape.review.unwrap().optional(),
});

/** The merged body as the schema types it; getMergedHandoff always sets `human`, and the route's schema checks it. */
const mergedBody = (handoff: MergedHandoff) => handoff.body as z.input<typeof mergedHandoffSchema>;

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/threads/{key}/handoff",
  summary: "The merged packet the next session reads, with a strong ETag; with `after`, the waiting read (docs/decisions/019-waiting-read.md).",
  auth: { kind: "reader" },
  params: z.object({ key: z.string() }),
  headers: { "If-None-Match": "optional: the ETag you hold; 304 when it is still current" },
  query: handoffQuerySchema,
  response: {
    kind: "json",
    status: 200,
    conditional: true,
    schema: mergedHandoffSchema,
    description: "the agent's fields as written plus `human`, and `ci` and `review` when the code host reported them; headers `ETag`, `baton-packet-id`, `baton-human-revision`. 304 (no body) when If-None-Match matches, or when `wait` ran out with nothing new",
  },
  errors: ["not_found", "rate_limited", "unavailable"],
  handler: async ({ request, params, query, reader }) => {
    if (query.after === undefined) {
      const handoff = await getMergedHandoff(params.key);
      return reply(mergedBody(handoff), { headers: handoffHeaders(handoff) });
    }
    const outcome = await waitForHandoffChange({
      threadKey: params.key,
      after: query.after,
      afterPacket: query.after_packet,
      waitMs: (query.wait ?? 0) * 1000,
      signal: request.signal,
      reader: readerIdentity(request, reader),
    });
    // The wait ended with nothing new: 304 with the validators of the current representation.
    const { handoff } = outcome;
    return reply(mergedBody(handoff), { status: outcome.changed ? 200 : 304, headers: handoffHeaders(handoff) });
  },
});
