import { z } from "zod";
import { SEVERITIES } from "../../contract/severity";
import { RISK_STATES, TRIAGE_ACTIONS } from "./triage-state";

/**
 * The risks view's shapes (GET /api/v1/risks, POST /api/v1/risks/triage),
 * client-safe: the server builds them in ./queries.ts and ./triage.ts, the
 * browser parses refetches and answers with them. Dates are ISO strings.
 */

/** What a person can do to a risk: the three triage states, or take the triage back. */
export const TRIAGE_REQUEST_ACTIONS = [...TRIAGE_ACTIONS, "untriaged"] as const;
export type TriageRequestAction = (typeof TRIAGE_REQUEST_ACTIONS)[number];

/** At most this many thread-and-fingerprint targets in one triage request. */
export const TRIAGE_TARGETS_MAX = 1000;

/** The list's views: everything still worth a look (hides resolved and snoozed), or everything. */
export const RISK_VIEWS = ["open", "all"] as const;
export type RiskView = (typeof RISK_VIEWS)[number];

/**
 * The list's orders: `attention` (regressed first, then by severity, then the most recently
 * seen) or one column of the table. Each column has the direction a first click gives.
 */
export const RISK_SORTS = ["attention", "severity", "detail", "threads", "first_seen", "last_seen", "occurrences"] as const;
export type RiskSort = (typeof RISK_SORTS)[number];
export const RISK_ORDERS = ["asc", "desc"] as const;
export type RiskOrder = (typeof RISK_ORDERS)[number];
export const RISK_SORT_FIRST_ORDER: Record<RiskSort, RiskOrder> = {
  attention: "desc",
  severity: "desc",
  detail: "asc",
  threads: "desc",
  first_seen: "desc",
  last_seen: "desc",
  occurrences: "desc",
};

/** The stored triage behind a state: who decided what, when. */
export const triageDto = z.object({
  state: z.enum(TRIAGE_ACTIONS),
  snoozed_until: z.string().nullable(),
  severity_at_triage: z.enum(SEVERITIES),
  by: z.string(),
  at: z.string(),
});
export type TriageDto = z.infer<typeof triageDto>;

/** One risk (by fingerprint) in one thread whose active packet carries it. */
export const riskThreadDto = z.object({
  thread_key: z.string(),
  agent: z.string().nullable(),
  /** The thread's active packet, which carries the risk. */
  packet_id: z.string(),
  severity: z.enum(SEVERITIES),
  severity_raw: z.string().nullable(),
  detail: z.string(),
  mitigation: z.string().nullable(),
  state: z.enum(RISK_STATES),
  needs_attention: z.boolean(),
  triage: triageDto.nullable(),
  /** When a version of this thread carrying the fingerprint first, and last, arrived. */
  first_seen: z.string(),
  last_seen: z.string(),
  /** Versions of this thread carrying it. */
  occurrences: z.number().int(),
});
export type RiskThreadDto = z.infer<typeof riskThreadDto>;

/** The same risk (one fingerprint) across the threads whose active packets carry it. */
export const riskGroupDto = z.object({
  fingerprint: z.string(),
  /** The highest severity among its threads. */
  severity: z.enum(SEVERITIES),
  /** The wording of its most severe, most recently seen thread. */
  detail: z.string(),
  /** Resolved in some thread, and carried again by a newer packet of it: listed first. */
  regressed: z.boolean(),
  needs_attention: z.boolean(),
  /** The distinct states of its threads, in RISK_STATES order. */
  states: z.array(z.enum(RISK_STATES)),
  first_seen: z.string(),
  last_seen: z.string(),
  /** Versions carrying it, summed over its threads. */
  occurrences: z.number().int(),
  threads: z.array(riskThreadDto),
});
export type RiskGroupDto = z.infer<typeof riskGroupDto>;

export const riskListDto = z.object({
  generated_at: z.string(),
  view: z.enum(RISK_VIEWS),
  /** The order of `groups` (ties by fingerprint). */
  sort: z.enum(RISK_SORTS),
  order: z.enum(RISK_ORDERS),
  /** This page's groups, in the list's order. */
  groups: z.array(riskGroupDto),
  /** Groups in the view, on every page. */
  total: z.number().int(),
  /** Thread risks matching the text filter that the view leaves out (resolved or snoozed). */
  hidden: z.number().int(),
  /** Ask again with `cursor` set to this for the groups after this page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type RiskListDto = z.infer<typeof riskListDto>;

/** A triage request's answer: each target's state now. */
export const triageResultDto = z.object({
  triaged: z.array(
    z.object({
      thread_key: z.string(),
      fingerprint: z.string(),
      packet_id: z.string(),
      state: z.enum(RISK_STATES),
      triage: triageDto.nullable(),
    }),
  ),
});
export type TriageResultDto = z.infer<typeof triageResultDto>;
