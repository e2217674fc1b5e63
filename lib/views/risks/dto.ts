import { z } from "zod";
import { enumMembers } from "../../core/enum-members";
import { isoTime } from "../../core/iso-time";
import { SEVERITIES, severityRank } from "../../contract/severity";
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

export const RISK_ORDERS = ["asc", "desc"] as const;
export type RiskOrder = (typeof RISK_ORDERS)[number];
/**
 * The list's orders: `attention` (regressed first, then by severity, then the most recently
 * seen) or one column of the table. Each column has the direction a first click gives.
 */
export const RISK_SORT_FIRST_ORDER = {
  attention: "desc",
  severity: "desc",
  detail: "asc",
  threads: "desc",
  first_seen: "desc",
  last_seen: "desc",
  occurrences: "desc",
} as const satisfies Record<string, RiskOrder>;
export type RiskSort = keyof typeof RISK_SORT_FIRST_ORDER;
export const RISK_SORTS = enumMembers(RISK_SORT_FIRST_ORDER);

/** A group's values the list sorts by: computed by the database (lib/views/risks/list-sql.ts), compared in the browser for deltas. */
export type RiskSortKey = "regressed" | "rank" | "detailKey" | "threads" | "firstSeen" | "lastSeen" | "occurrences";

/**
 * Each order's keys, in turn; a key with `fixed` keeps its direction whatever the order. Ties
 * end by fingerprint, ascending, so every group has one place (docs/decisions/058-risks-paged-in-sql.md).
 */
export const RISK_SORT_KEYS: Record<RiskSort, readonly { key: RiskSortKey; fixed?: RiskOrder }[]> = {
  attention: [{ key: "regressed" }, { key: "rank" }, { key: "lastSeen" }],
  severity: [{ key: "rank" }, { key: "lastSeen", fixed: "desc" }],
  detail: [{ key: "detailKey" }],
  threads: [{ key: "threads" }, { key: "rank", fixed: "desc" }],
  first_seen: [{ key: "firstSeen" }],
  last_seen: [{ key: "lastSeen" }],
  occurrences: [{ key: "occurrences" }, { key: "rank", fixed: "desc" }],
};

/** How much of a detail counts when sorting by it, in lower case. */
export const DETAIL_KEY_CHARS = 64;

/** The stored triage behind a state: who decided what, when. */
export const triageDto = z.object({
  state: z.enum(TRIAGE_ACTIONS),
  snoozed_until: isoTime.nullable(),
  severity_at_triage: z.enum(SEVERITIES),
  by: z.string(),
  at: isoTime,
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
  first_seen: isoTime,
  last_seen: isoTime,
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
  first_seen: isoTime,
  last_seen: isoTime,
  /** Versions carrying it, summed over its threads. */
  occurrences: z.number().int(),
  threads: z.array(riskThreadDto),
});
export type RiskGroupDto = z.infer<typeof riskGroupDto>;

/** A group's value for a sort key, as the database computes it (text in the database's collation there, code units here). */
function sortValue(group: RiskGroupDto, key: RiskSortKey): number | string {
  switch (key) {
    case "regressed":
      return Number(group.regressed);
    case "rank":
      return severityRank(group.severity);
    case "detailKey":
      return group.detail.slice(0, DETAIL_KEY_CHARS).toLowerCase();
    case "threads":
      return group.threads.length;
    case "firstSeen":
      return group.first_seen;
    case "lastSeen":
      return group.last_seen;
    case "occurrences":
      return group.occurrences;
  }
}

const compareValues = (a: number | string, b: number | string) => (a < b ? -1 : a > b ? 1 : 0);

/** The list's order between two groups (negative: `a` first). */
export function compareRiskGroups(a: RiskGroupDto, b: RiskGroupDto, sort: RiskSort, order: RiskOrder): number {
  for (const { key, fixed } of RISK_SORT_KEYS[sort]) {
    const difference = compareValues(sortValue(a, key), sortValue(b, key));
    if (difference) return (fixed ?? order) === "desc" ? -difference : difference;
  }
  return compareValues(a.fingerprint, b.fingerprint);
}

export const riskListDto = z.object({
  generated_at: isoTime,
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

/**
 * The risks list's changes over the live stream (lib/views/risks/risks-delta.ts,
 * docs/decisions/059-risks-deltas.md): for the threads a batch names, every group they carry
 * now (whole, across all its threads) in the stream's view, and the view's counts.
 */
export const risksDeltaDto = z.object({
  view: z.literal("risks"),
  /** The last ledger seq of the batch it answers. */
  seq: z.number().int(),
  generated_at: isoTime,
  /** The threads whose risks `groups` now show, in place of what the list held for them. */
  threads: z.array(z.string()),
  groups: z.array(riskGroupDto),
  /** The view's counts now; null when the batch named no thread (nothing changed). */
  total: z.number().int().nullable(),
  hidden: z.number().int().nullable(),
  /** The change could not be told as groups: refetch the list. */
  refetch: z.boolean(),
});
export type RisksDeltaDto = z.infer<typeof risksDeltaDto>;
