import "server-only";
import { z } from "zod";
import type { Person } from "../../auth/roles";
import { inTransaction, sqlExecutor, type Tx } from "../../db/client";
import { inChunks, insertRows, updateOnConflict } from "../../db/sql";
import { BatonError } from "../../core/errors";
import { announceLedger } from "../../events/bus";
import { appendLedgerEvents, type NewLedgerEvent } from "../../events/ledger";
import { readActiveRisks, type ActiveRisk } from "./active-risks";
import { TRIAGE_REQUEST_ACTIONS, TRIAGE_TARGETS_MAX, triageResultDto, type TriageResultDto } from "./dto";
import { riskState } from "./triage-state";

/**
 * People's triage of risks (docs/product.md#risks): acknowledge, resolve, snooze
 * (until a date, or until the severity rises), or take a triage back. A
 * triage belongs to a thread and a fingerprint, so it carries over to newer
 * versions; RiskTriage holds the current state, the ledger the history.
 */

const isoDate = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()], {
    error: "snoozed_until must be an ISO-8601 date or date-time (2026-12-01 or 2026-12-01T09:00:00Z), or null for until its severity rises",
  })
  .transform((text) => new Date(text));

const targetSchema = z.strictObject({
  thread_key: z.string({ error: "thread_key must be a string" }).min(1, "thread_key must not be empty").max(500),
  fingerprint: z.string({ error: "fingerprint must be a string" }).min(1, "fingerprint must not be empty").max(200),
});

export const triageRequestSchema = z
  .strictObject({
    action: z.enum(TRIAGE_REQUEST_ACTIONS, { error: `action must be one of ${TRIAGE_REQUEST_ACTIONS.map((a) => `"${a}"`).join(", ")}` }),
    targets: z
      .array(targetSchema, { error: "targets must be a list of {thread_key, fingerprint}" })
      .min(1, "targets must name at least one risk")
      .max(TRIAGE_TARGETS_MAX, `targets may name at most ${TRIAGE_TARGETS_MAX} risks`),
    snoozed_until: isoDate.nullable().optional(),
  })
  .superRefine((request, context) => {
    if (request.action === "snoozed") {
      if (request.snoozed_until === undefined) {
        context.addIssue({ code: "custom", path: ["snoozed_until"], message: "snoozed_until is required to snooze: a future date, or null for until its severity rises" });
      } else if (request.snoozed_until && request.snoozed_until.getTime() <= Date.now()) {
        context.addIssue({ code: "custom", path: ["snoozed_until"], message: "snoozed_until must be in the future" });
      }
    } else if (request.snoozed_until) {
      context.addIssue({ code: "custom", path: ["snoozed_until"], message: `snoozed_until applies only to the "snoozed" action` });
    }
  });
export type TriageRequest = z.infer<typeof triageRequestSchema>;

type Target = TriageRequest["targets"][number];
const targetKey = (threadKey: string, fingerprint: string) => `${threadKey}\u0000${fingerprint}`;

/** Each target's risk in its thread's active packet; every target that has none is named in one 400. */
async function findTargets(tx: Tx, targets: Target[], now: Date): Promise<ActiveRisk[]> {
  const risks = await readActiveRisks({ now, threadKeys: [...new Set(targets.map((target) => target.thread_key))], tx });
  const byTarget = new Map(risks.map((risk) => [targetKey(risk.threadKey, risk.fingerprint), risk]));
  const missing = targets.filter((target) => !byTarget.has(targetKey(target.thread_key, target.fingerprint)));
  if (missing.length) {
    const named = missing.slice(0, 5).map((target) => `"${target.fingerprint}" in thread "${target.thread_key}"`).join(", ");
    const more = missing.length > 5 ? ` and ${missing.length - 5} more` : "";
    throw new BatonError(
      "invalid_request",
      `The active packet of the thread carries no risk ${named}${more} (the thread is unknown or archived, or a newer packet dropped the risk); nothing was triaged. Reload the risks and try again.`,
      { field: "targets", missing: missing.map((target) => ({ thread_key: target.thread_key, fingerprint: target.fingerprint })) },
    );
  }
  return targets.map((target) => byTarget.get(targetKey(target.thread_key, target.fingerprint))!);
}

const TRIAGE_COLUMNS = ["threadId", "fingerprint", "state", "snoozedUntil", "severityAtTriage", "updatedAt", "updatedBy"] as const;
/** Pairs per DELETE: two bound values each, under SQLite's 999. */
const PAIRS_PER_DELETE = 200;

/** What every target now holds (its severity at triage is its own). */
interface WrittenTriage {
  state: Exclude<TriageRequest["action"], "untriaged">;
  snoozedUntil: Date | null;
  updatedAt: Date;
  updatedBy: string;
}

/** Writes the action for every risk in a few statements (not one per risk): upserts, or deletes to untriage. */
async function writeTriages(tx: Tx, person: Person, request: TriageRequest, risks: ActiveRisk[], at: Date): Promise<WrittenTriage | null> {
  if (request.action === "untriaged") {
    await inChunks(
      risks,
      async (chunk) => {
        await tx.riskTriage.deleteMany({ where: { OR: chunk.map((risk) => ({ threadId: risk.threadId, fingerprint: risk.fingerprint })) } });
        return [];
      },
      PAIRS_PER_DELETE,
    );
    return null;
  }
  const snoozedUntil = request.action === "snoozed" ? (request.snoozed_until ?? null) : null;
  await insertRows(
    await sqlExecutor(tx),
    "RiskTriage",
    TRIAGE_COLUMNS,
    risks.map((risk) => [risk.threadId, risk.fingerprint, request.action, snoozedUntil, risk.severity, at, person.username]),
    updateOnConflict(["threadId", "fingerprint"], TRIAGE_COLUMNS.slice(2)),
  );
  return { state: request.action, snoozedUntil, updatedAt: at, updatedBy: person.username };
}

/**
 * Applies one triage action to every target, in one transaction (all or
 * nothing), with one ledger event per target; answers with each target's
 * state now. A target named twice is triaged once.
 */
export async function triageRisks(person: Person, request: TriageRequest): Promise<TriageResultDto> {
  const at = new Date();
  const unique = [...new Map(request.targets.map((target) => [targetKey(target.thread_key, target.fingerprint), target])).values()];
  const triaged = await inTransaction(async (tx) => {
    const risks = await findTargets(tx, unique, at);
    const written = await writeTriages(tx, person, request, risks, at);
    const events: NewLedgerEvent[] = [];
    const results: TriageResultDto["triaged"] = [];
    for (const risk of risks) {
      const triage = written && { ...written, severityAtTriage: risk.severity };
      const snoozedUntil = triage?.snoozedUntil?.toISOString() ?? null;
      events.push({
        kind: `risk_${request.action}`,
        actor: person.username,
        threadKey: risk.threadKey,
        versionId: risk.versionId,
        data: { fingerprint: risk.fingerprint, detail: risk.detail, severity: risk.severity, snoozed_until: snoozedUntil, previous_state: risk.state },
      });
      results.push({
        thread_key: risk.threadKey,
        fingerprint: risk.fingerprint,
        packet_id: risk.versionId,
        state: riskState(triage, { severity: risk.severity, lastSeenAt: risk.activeReceivedAt }, at),
        triage: triage
          ? { state: triage.state, snoozed_until: snoozedUntil, severity_at_triage: triage.severityAtTriage, by: triage.updatedBy, at: at.toISOString() }
          : null,
      });
    }
    await appendLedgerEvents(tx, events, at);
    return results;
  });
  announceLedger();
  return triageResultDto.parse({ triaged });
}
