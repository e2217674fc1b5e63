import { z } from "zod";
import { isoTime } from "../../core/iso-time";
import { canonicalPacketSchema } from "../../contract/canonical";
import { FLAG_CODES } from "../../contract/lint";
import { SEVERITIES } from "../../contract/severity";
import { humanSectionSchema, humanSummarySchema } from "../../human/section";

/** What the API and the pages receive: never Prisma rows. Dates are ISO strings. */

/** What an agent session reports about itself (the watchdog). */
export const SESSION_EVENT_KINDS = ["session_started", "heartbeat", "session_ended"] as const;
export type SessionEventKind = (typeof SESSION_EVENT_KINDS)[number];

/** How a packet reached Baton (lib/ingest/types.ts IngestSourceKind). */
export const PACKET_SOURCES = ["http", "file", "cli"] as const;

export const flagDto = z.object({ code: z.enum(FLAG_CODES), reason: z.string() });

export const riskCountsDto = z.object(Object.fromEntries(SEVERITIES.map((s) => [s, z.number().int()])) as Record<
  (typeof SEVERITIES)[number],
  z.ZodNumber
>);

/** When a packet arrived (Baton's clock) and when its agent says it was written (its created_at, if given). */
const packetTimes = { received_at: isoTime, created_at: isoTime.nullable() };

/** Which thread, in the words the board and the timeline name it by (key, agent, project, branch, topic). */
export const threadIdentityDto = z.object({
  key: z.string(),
  agent: z.string().nullable(),
  project: z.string().nullable(),
  branch: z.string().nullable(),
  topic: z.string().nullable(),
});

export const threadCardDto = threadIdentityDto.extend({
  archived: z.boolean(),
  updated_at: isoTime,
  /** The latest agent session report (POST /api/v1/threads/{key}/events), if any. */
  last_session: z.object({ kind: z.enum(SESSION_EVENT_KINDS), at: isoTime }).nullable(),
  active_packet: z.object({
    id: z.string(),
    ...packetTimes,
    summary: z.string().nullable(),
    task_id: z.string().nullable(),
    next_action: z.string().nullable(),
    highest_severity: z.enum(SEVERITIES).nullable(),
    risk_counts: riskCountsDto,
    question_count: z.number().int(),
    flags: z.array(flagDto),
    /** When the flags were computed: at ingest for the stored lint flags, at read for what a card shows (lib/board/flags.ts). */
    flags_computed_at: isoTime,
    human: humanSummarySchema,
  }),
});
export type ThreadCardDto = z.infer<typeof threadCardDto>;

export const threadListDto = z.object({
  threads: z.array(threadCardDto),
  next_cursor: z.string().nullable(),
});
export type ThreadListDto = z.infer<typeof threadListDto>;

export const versionSummaryDto = z.object({
  id: z.string(),
  active: z.boolean(),
  source: z.enum(PACKET_SOURCES),
  ...packetTimes,
  next_action: z.string().nullable(),
  highest_severity: z.enum(SEVERITIES).nullable(),
  flags: z.array(flagDto),
});

export const threadDetailDto = threadCardDto.extend({
  versions: z.array(versionSummaryDto),
  /** The active version's whole human section. */
  human: humanSectionSchema,
});
export type ThreadDetailDto = z.infer<typeof threadDetailDto>;

export const packetDto = z.object({
  id: z.string(),
  thread_key: z.string(),
  active: z.boolean(),
  content_hash: z.string(),
  source: z.enum(PACKET_SOURCES),
  source_path: z.string().nullable(),
  workspace_root: z.string().nullable(),
  ...packetTimes,
  /** For the thread's active packet, what its card shows (lib/board/flags.ts); for an older version, its stored lint flags. */
  flags: z.array(flagDto),
  flags_computed_at: isoTime,
  canonical: canonicalPacketSchema,
  received: z.record(z.string(), z.unknown()),
});
export type PacketDto = z.infer<typeof packetDto>;

/** POST /api/v1/packets, one packet: where it was stored (`active` is false for a late, already superseded one). */
export const ingestResultDto = z.object({
  packet_id: z.string(),
  thread_key: z.string(),
  /** What the card shows for an active packet (lib/board/flags.ts); the stored lint flags of a late one. */
  flags: z.array(flagDto),
  flags_computed_at: isoTime,
  duplicate: z.boolean(),
  active: z.boolean(),
});

/** POST /api/v1/packets, a batch: one result per item, in order, each stored on its own. */
export const ingestBatchResultDto = z.object({
  results: z.array(
    z.union([
      ingestResultDto.extend({ index: z.number().int(), status: z.union([z.literal(200), z.literal(201)]) }),
      z.object({
        index: z.number().int(),
        status: z.number().int(),
        error: z.object({ code: z.string(), message: z.string(), details: z.unknown() }),
      }),
    ]),
  ),
});

/** What POST /api/v1/packets answers: a packet's result (200, 201) or a batch's (207). */
export const ingestAnswerDto = z.union([ingestResultDto, ingestBatchResultDto]);

/** What changed between two versions of a thread: risks, next action, files. */
export const versionDiffDto = z.object({
  risks_added: z.array(z.object({ severity: z.enum(SEVERITIES), detail: z.string() })),
  risks_removed: z.array(z.object({ severity: z.enum(SEVERITIES), detail: z.string() })),
  risks_severity_changed: z.array(
    z.object({ detail: z.string(), before: z.enum(SEVERITIES), after: z.enum(SEVERITIES) }),
  ),
  next_action: z.object({ before: z.string().nullable(), after: z.string().nullable(), changed: z.boolean() }),
  files_added: z.array(z.string()),
  files_removed: z.array(z.string()),
  files_kept: z.array(z.string()),
});
export type VersionDiffDto = z.infer<typeof versionDiffDto>;
