import { z } from "zod";
import { isoTime } from "../core/iso-time";
import { displayNameSchema } from "../contract/display-name";

/**
 * Code host integrations: what the API and the pages see (no server code here).
 * The state a code host reports about a thread's work (pull request, CI, review) is
 * normalised to these shapes whatever the host (docs/integrations.md#code-hosts).
 */

export const CODE_HOSTS = ["github", "gitlab"] as const;
export type CodeHost = (typeof CODE_HOSTS)[number];
const codeHostSchema = z.enum(CODE_HOSTS, { error: "host must be github or gitlab" });

export const PULL_REQUEST_STATES = ["open", "draft", "merged", "closed"] as const;
export const CI_STATES = ["passing", "failing", "running"] as const;
export const REVIEW_STATES = ["approved", "changes_requested", "commented", "dismissed"] as const;
const ciStateSchema = z.enum(CI_STATES);
export type CiState = z.infer<typeof ciStateSchema>;

export const pullRequestChangeSchema = z.object({
  url: z.string().nullable(),
  number: z.number().int(),
  state: z.enum(PULL_REQUEST_STATES),
  title: z.string().nullable(),
});
export const ciChangeSchema = z.object({
  /** What it is kept by: a check run's name, or "pipeline" on GitLab (a newer one replaces it). */
  name: z.string(),
  state: ciStateSchema,
  /** When failing: the failing check's or job's name, to show and to quote. */
  failing: z.string().nullable(),
  url: z.string().nullable(),
  /** The commit it ran on: a newer commit's results replace an older one's. */
  sha: z.string().nullable(),
});
export const reviewChangeSchema = z.object({
  reviewer: z.string(),
  state: z.enum(REVIEW_STATES),
  comment: z.string().nullable(),
  url: z.string().nullable(),
});

const where = { repository: z.string(), branch: z.string(), at: isoTime };
/** One delivery, normalised: what it says and where (repository and branch) it applies. */
export const codeHostChangeSchema = z.discriminatedUnion("event", [
  z.object({ event: z.literal("pull_request"), ...where, pull_request: pullRequestChangeSchema }),
  z.object({ event: z.literal("ci"), ...where, ci: ciChangeSchema }),
  z.object({ event: z.literal("review"), ...where, review: reviewChangeSchema }),
]);
export type CodeHostChange = z.infer<typeof codeHostChangeSchema>;

/** What the card and the thread page show of the work outside the agent. */
export const threadWorkDto = z.object({
  pull_request: pullRequestChangeSchema.extend({ at: isoTime }).nullable(),
  ci: z
    .object({
      state: ciStateSchema,
      /** The first failing check (or the first still running), with its link. */
      check: z.string().nullable(),
      url: z.string().nullable(),
      checks: z.number().int(),
      at: isoTime,
    })
    .nullable(),
  review: z
    .object({
      state: z.enum(["approved", "changes_requested"]),
      reviewer: z.string(),
      comment: z.string().nullable(),
      url: z.string().nullable(),
      at: isoTime,
    })
    .nullable(),
});
export type ThreadWorkDto = z.infer<typeof threadWorkDto>;

export const INTEGRATION_NAME_MAX = 100;

export const newIntegrationSchema = z.strictObject({
  name: displayNameSchema("name", INTEGRATION_NAME_MAX),
  host: codeHostSchema,
});
export type NewIntegration = z.infer<typeof newIntegrationSchema>;

export const integrationDto = z.object({
  id: z.string(),
  name: z.string(),
  host: codeHostSchema,
  /** Where the code host posts: this path on Baton's public address. */
  endpoint: z.string(),
  secret_hint: z.string(),
  created_at: isoTime,
  created_by: z.string(),
});
export type IntegrationDto = z.infer<typeof integrationDto>;

/** POST answer: `secret` is the one to paste into the code host's webhook settings, shown this once. */
export const createdIntegrationDto = z.object({ integration: integrationDto, secret: z.string() });
export type CreatedIntegrationDto = z.infer<typeof createdIntegrationDto>;

export const unmatchedDeliveryDto = z.object({
  integration_id: z.string(),
  delivery_id: z.string(),
  event: z.enum(["pull_request", "ci", "review"]),
  repository: z.string().nullable(),
  branch: z.string().nullable(),
  received_at: isoTime,
});

export const UNMATCHED_SHOWN = 50;
export const integrationListDto = z.object({
  integrations: z.array(integrationDto),
  /** The latest deliveries no active thread matched (at most UNMATCHED_SHOWN). */
  unmatched: z.array(unmatchedDeliveryDto),
});
export type IntegrationListDto = z.infer<typeof integrationListDto>;

/** What a code host hears back: applied to threads, or a duplicate that changed nothing, or an event Baton does not read. */
export const deliveryAnswerDto = z.object({
  outcome: z.enum(["applied", "unmatched", "duplicate", "ignored"]),
  threads: z.array(z.string()),
});
export type DeliveryAnswerDto = z.infer<typeof deliveryAnswerDto>;
