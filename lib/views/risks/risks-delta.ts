import "server-only";
import { viewStreamQuery, viewStreamQuerySchema } from "../../events/view-stream-query";
import { threadsNamedBy, type LedgerEventDto } from "../../events/dto";
import { viewDeltaFrame } from "../../events/shared-frames";
import { readActiveRisks } from "./active-risks";
import { risksDeltaDto, type RisksDeltaDto } from "./dto";
import { riskFiltersSchema, type RiskFilters } from "./filters";
import { countGroups } from "./list-sql";
import { groupsOf } from "./queries";

/**
 * The risks list's changes over the live stream (docs/decisions/059-risks-deltas.md): for the
 * threads a batch names, every group they carry now in the stream's view, whole, and the view's
 * counts; read once per batch and filters for every stream that asks (`?risks=`).
 */

/** More groups than this in one batch (a packet of thousands of new risks) are a refetch, not a delta. */
export const RISKS_DELTA_GROUPS_MAX = 500;

export const risksStreamQuerySchema = viewStreamQuerySchema("risks", "the risks list's filters as a query string");

/** The filters named by `?risks=`, or null when the stream does not ask for risks deltas; 400 for bad filters. */
export function risksStreamFilters(risks: string | undefined): RiskFilters | null {
  return viewStreamQuery("risks", risks, riskFiltersSchema);
}

export async function computeRisksDelta(events: readonly LedgerEventDto[], filters: RiskFilters, now = new Date()): Promise<RisksDeltaDto> {
  const seq = events.at(-1)?.seq ?? 0;
  const none = (threads: string[], refetch: boolean): RisksDeltaDto => ({ view: "risks", seq, generated_at: now.toISOString(), threads, groups: [], total: null, hidden: null, refetch });
  const threads = threadsNamedBy(events);
  if (threads === null) return none([], true);
  if (!threads.length) return none(threads, false);
  const carried = await readActiveRisks({ now, threadKeys: threads });
  const fingerprints = [...new Set(carried.map((risk) => risk.fingerprint))];
  if (fingerprints.length > RISKS_DELTA_GROUPS_MAX) return none([], true);
  const [groups, counts] = await Promise.all([groupsOf(fingerprints, filters.state, filters.q, now), countGroups(filters.state, filters.q, now)]);
  return risksDeltaDto.parse({ view: "risks", seq, generated_at: now.toISOString(), threads, groups: [...groups.values()], ...counts, refetch: false });
}

/** The `event: delta` frame of the risks list for a batch and filters, made once; a failure is told as a refetch. */
export function risksDeltaFrame(events: readonly LedgerEventDto[], filters: RiskFilters): Promise<string> {
  return viewDeltaFrame("risks", events, filters, () => computeRisksDelta(events, filters), (): RisksDeltaDto => ({
    view: "risks", seq: events.at(-1)?.seq ?? 0, generated_at: new Date().toISOString(), threads: [], groups: [], total: null, hidden: null, refetch: true,
  }));
}
