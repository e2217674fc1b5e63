import { z } from "zod";
import { verdictPointerKindSchema } from "../../contract/canonical";
import { SEVERITIES } from "../../contract/severity";

/** What the thread page and the board's badge get from the verdict pointers. */

export const REVIEW_VERDICTS = ["pass", "soft_fail", "hard_fail"] as const;
export const REVIEW_DIMENSIONS = [
  "problem_fit",
  "scope_discipline",
  "assumptions",
  "verification_quality",
  "handoff_readiness",
] as const;
export const VERDICT_POINTER_STATUSES = ["link", "ok", "missing", "refused", "invalid", "no_root"] as const;
export const VERDICT_STATES = ["pass", "fail", "missing"] as const;

export const verdictFindingDto = z.object({
  code: z.string().nullable(),
  detail: z.string(),
  severity: z.enum(SEVERITIES),
  /** The word the report used, as given; null when it gave none. */
  severity_raw: z.string().nullable(),
  severity_known: z.boolean(),
});

export const verdictFindingGroupDto = z.object({
  severity: z.enum(SEVERITIES),
  count: z.number().int().nonnegative(),
  items: z.array(verdictFindingDto),
});

export const verdictCoverageDto = z.union([
  z.object({ current: z.number(), previous: z.number().nullable() }),
  z.number(),
  z.null(),
]);

export const verificationReportDto = z.object({
  type: z.literal("verification"),
  task_id: z.string().nullable(),
  passed: z.boolean(),
  /** All five severities, highest first, each with its count (0 included). */
  findings: z.array(verdictFindingGroupDto).length(SEVERITIES.length),
  finding_count: z.number().int().nonnegative(),
  coverage: verdictCoverageDto,
  head_commit: z.string().optional(),
});

export const reviewDimensionDto = z.object({
  name: z.string(),
  score: z.number().min(0).max(2),
  note: z.string(),
});

export const reviewReportDto = z.object({
  type: z.literal("review"),
  task_id: z.string().nullable(),
  total: z.number().min(0).max(10),
  verdict: z.enum(REVIEW_VERDICTS),
  /** verdict is pass and total reaches REVIEW_PASS_TOTAL. */
  passed: z.boolean(),
  dimensions: z.array(reviewDimensionDto),
  /** Which of the five expected dimensions the report leaves out. */
  missing_dimensions: z.array(z.string()),
});

export const verdictReportDto = z.discriminatedUnion("type", [verificationReportDto, reviewReportDto]);

export const verdictPointerReadingDto = z.object({
  kind: verdictPointerKindSchema,
  ref: z.string(),
  status: z.enum(VERDICT_POINTER_STATUSES),
  reason: z.string().optional(),
  /** Only for status "link": the normalised http(s) URL. */
  url: z.url({ protocol: /^https?$/ }).optional(),
  /** Only for status "ok". */
  report: verdictReportDto.optional(),
  /** Only for status "ok": read from the workspace, or sent with the packet (docs/contract.md#reports-sent-with-a-packet). */
  from: z.enum(["workspace", "attached"]).optional(),
});

export const verdictSummaryDto = z.object({
  state: z.enum(VERDICT_STATES),
  reasons: z.array(z.string()),
});

export const verdictReadingDto = z.object({
  pointers: z.array(verdictPointerReadingDto),
  summary: verdictSummaryDto,
  /** When the files were read (ISO 8601). */
  read_at: z.iso.datetime(),
});

export type VerdictFindingDto = z.infer<typeof verdictFindingDto>;
export type VerificationReportDto = z.infer<typeof verificationReportDto>;
export type ReviewReportDto = z.infer<typeof reviewReportDto>;
export type VerdictReportDto = z.infer<typeof verdictReportDto>;
export type VerdictPointerReadingDto = z.infer<typeof verdictPointerReadingDto>;
export type VerdictPointerStatus = (typeof VERDICT_POINTER_STATUSES)[number];
export type VerdictSummaryDto = z.infer<typeof verdictSummaryDto>;
export type VerdictReadingDto = z.infer<typeof verdictReadingDto>;
