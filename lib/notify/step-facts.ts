import "server-only";
import { Prisma } from "../generated/prisma/client";
import { sqlExecutor, type SqlExecutor, type Tx } from "../db/client";
import { inChunks, instant, optionalInstant, type ExecutorRow } from "../db/sql";
import type { HumanRevision, LedgerEvent, PacketVersion, RiskTriage, Thread } from "../generated/prisma/client";
import { eventData, type LedgerRow } from "./ledger-row";
import type { RiskRow } from "./messages";

/**
 * Everything a notifier step's events need from the database, read for the whole step in a
 * few statements (chunked IN lists) rather than several per event: the step runs in the
 * server's notifier loop after every ingest, and Prisma's per-query work was most of its cost
 * (docs/decisions/085-notifier-reads-per-step.md).
 */

export interface QuestionRow {
  questionId: string;
  question: string;
  blocking: boolean;
  options: string;
}

export interface VersionFacts {
  id: string;
  threadId: string;
  receivedAt: Date;
  flags: string;
  project: string | null;
  agent: string | null;
  topic: string | null;
  branch: string | null;
  nextAction: string | null;
  /** In the packet's order. */
  risks: RiskRow[];
  questions: QuestionRow[];
}

export interface ThreadFactsRow {
  topic: string | null;
  agent: string | null;
  project: string | null;
  branch: string | null;
  activeVersionId: string | null;
}

export interface StoredTriageRow {
  threadId: string;
  fingerprint: string;
  state: string;
  snoozedUntil: Date | null;
  severityAtTriage: string;
  updatedAt: Date;
}

export interface StepFacts {
  /** The versions the events name, and the versions active before each packet arrived. */
  versions: Map<string, VersionFacts>;
  /** Per packet_received event (by seq): the version that was active when it arrived, if any. */
  previousVersion: Map<number, string>;
  /** Per version id: whether its canonical packet names verdict reports (read only when asked). */
  hasVerdictPointer: Map<string, boolean>;
  threads: Map<string, ThreadFactsRow>;
  /** `${versionId}\0${revision}` → the human section that revision stored. */
  humanSections: Map<string, string>;
  /** Resolved triages of the packets' risks, by `${threadId}\0${fingerprint}`. */
  resolvedTriages: Map<string, StoredTriageRow>;
  /** risk_regressed events already recorded, per thread key (only threads with a resolved triage above). */
  recordedRegressions: Map<string, { at: Date; fingerprint: unknown }[]>;
}

export const stepKey = (...parts: (string | number)[]) => parts.join("\u0000");

const list = (values: readonly unknown[]) => Prisma.join(values);

/** Rows per statement of the previous-version read: two bound values each. */
const PREVIOUS_PER_STATEMENT = 200;

export interface StepNeeds {
  /** packet_received rows to derive (named versions, with thread keys). */
  packets: LedgerRow[];
  /** Rows whose thread's facts are needed (stale, budget). */
  threadKeys: string[];
  /** Human action rows with their revision. */
  humanActions: { versionId: string; revision: number }[];
  /** Whether a webhook wants verdict.failed: only then are canonical packets read for their verdict pointers. */
  verdictPointers: boolean;
}

export async function readStepFacts(tx: Tx, needs: StepNeeds): Promise<StepFacts> {
  const sql = await sqlExecutor(tx);
  const previousVersion = await previousVersions(sql, needs.packets);
  const versionIds = [...new Set([...needs.packets.map((row) => row.versionId!), ...previousVersion.values(), ...needs.humanActions.map((action) => action.versionId)])];
  const versions = await readVersions(sql, versionIds);

  const hasVerdictPointer = new Map<string, boolean>();
  if (needs.verdictPointers) {
    // Only versions without an inline failed verdict: their reports decide.
    const ids = needs.packets.map((row) => row.versionId!).filter((id) => versions.has(id) && !hasFailedFlag(versions.get(id)!.flags));
    const rows = await inChunks([...new Set(ids)], (chunk) =>
      sql.query<Pick<PacketVersion, "id" | "canonicalJson">>(Prisma.sql`SELECT "id", "canonicalJson" FROM "PacketVersion" WHERE "id" IN (${list(chunk)})`),
    );
    for (const row of rows) {
      const canonical = JSON.parse(row.canonicalJson) as { verdict_pointer?: unknown[] };
      hasVerdictPointer.set(row.id, Boolean(canonical.verdict_pointer?.length));
    }
  }

  const threads = new Map<string, ThreadFactsRow>();
  const threadRows = await inChunks([...new Set(needs.threadKeys)], (chunk) =>
    sql.query<Pick<Thread, "key" | "topic" | "agent" | "project" | "branch" | "activeVersionId">>(
      Prisma.sql`SELECT "key", "topic", "agent", "project", "branch", "activeVersionId" FROM "Thread" WHERE "key" IN (${list(chunk)})`,
    ),
  );
  for (const { key, ...facts } of threadRows) threads.set(key, facts);

  const humanSections = new Map<string, string>();
  const revisionRows = await inChunks([...new Set(needs.humanActions.map((action) => action.versionId))], (chunk) =>
    sql.query<Pick<HumanRevision, "versionId" | "revision" | "section">>(
      Prisma.sql`SELECT "versionId", "revision", "section" FROM "HumanRevision" WHERE "versionId" IN (${list(chunk)}) AND "revision" IN (${list([
        ...new Set(needs.humanActions.map((action) => action.revision)),
      ])})`,
    ),
  );
  for (const row of revisionRows) humanSections.set(stepKey(row.versionId, row.revision), row.section);

  // risk_regressed is recorded whoever listens: the triages are read for every packet.
  const { resolvedTriages, recordedRegressions } = await readRegressionFacts(sql, needs.packets, versions);

  return { versions, previousVersion, hasVerdictPointer, threads, humanSections, resolvedTriages, recordedRegressions };
}

export function hasFailedFlag(flags: string): boolean {
  return (JSON.parse(flags) as { code: string }[]).some((flag) => flag.code === "verdict_failed");
}

/**
 * The version that was active when each packet arrived: store-batch records
 * `packet_superseded` (on the old version, `superseded_by` the new one) right after the new
 * version's `packet_received`, so it is the thread's first such event after the packet's,
 * when that event names the packet.
 */
async function previousVersions(sql: SqlExecutor, packets: readonly LedgerRow[]): Promise<Map<number, string>> {
  const found = await inChunks(
    packets,
    (chunk) => {
      const firstAfter = chunk.map(
        (row) =>
          Prisma.sql`(SELECT MIN(n."seq") FROM "LedgerEvent" n WHERE n."threadKey" = ${row.threadKey} AND n."kind" = 'packet_superseded' AND n."seq" > ${row.seq})`,
      );
      return sql.query<Pick<LedgerEvent, "seq" | "threadKey" | "versionId" | "data">>(
        Prisma.sql`SELECT "seq", "threadKey", "versionId", "data" FROM "LedgerEvent" WHERE "seq" IN (${list(firstAfter)})`,
      );
    },
    PREVIOUS_PER_STATEMENT,
  );
  const previous = new Map<number, string>();
  for (const row of packets) {
    // The thread's first packet_superseded after this packet: the one with the least seq among those found after it.
    let next: (typeof found)[number] | undefined;
    for (const event of found) if (event.threadKey === row.threadKey && event.seq > row.seq && (!next || event.seq < next.seq)) next = event;
    if (next?.versionId && eventData(next.data).superseded_by === row.versionId) previous.set(row.seq, next.versionId);
  }
  return previous;
}

async function readVersions(sql: SqlExecutor, ids: readonly string[]): Promise<Map<string, VersionFacts>> {
  type VersionColumns = Pick<PacketVersion, "id" | "threadId" | "receivedAt" | "flags" | "project" | "agent" | "topic" | "branch" | "nextAction">;
  const rows = await inChunks(ids, (chunk) =>
    sql.query<ExecutorRow<VersionColumns>>(
      Prisma.sql`SELECT "id", "threadId", "receivedAt", "flags", "project", "agent", "topic", "branch", "nextAction" FROM "PacketVersion" WHERE "id" IN (${list(chunk)})`,
    ),
  );
  const versions = new Map<string, VersionFacts>();
  for (const row of rows) versions.set(row.id, { ...row, receivedAt: instant(row.receivedAt), risks: [], questions: [] });
  const present = [...versions.keys()];
  const risks = await inChunks(present, (chunk) =>
    sql.query<RiskRow & { versionId: string }>(
      Prisma.sql`SELECT "versionId", "riskId", "severity", "detail", "mitigation", "fingerprint" FROM "Risk" WHERE "versionId" IN (${list(chunk)}) ORDER BY "versionId", "position"`,
    ),
  );
  for (const { versionId, ...risk } of risks) versions.get(versionId)!.risks.push(risk);
  const questions = await inChunks(present, (chunk) =>
    sql.query<ExecutorRow<QuestionRow> & { versionId: string }>(
      Prisma.sql`SELECT "versionId", "questionId", "question", "blocking", "options" FROM "AgentQuestion" WHERE "versionId" IN (${list(chunk)}) ORDER BY "versionId", "position"`,
    ),
  );
  for (const { versionId, blocking, ...question } of questions) versions.get(versionId)!.questions.push({ ...question, blocking: Boolean(blocking) });
  return versions;
}

async function readRegressionFacts(
  sql: SqlExecutor,
  packets: readonly LedgerRow[],
  versions: ReadonlyMap<string, VersionFacts>,
): Promise<Pick<StepFacts, "resolvedTriages" | "recordedRegressions">> {
  const derived = packets.map((row) => versions.get(row.versionId!)).filter((version) => version !== undefined);
  const threadIds = [...new Set(derived.map((version) => version.threadId))];
  const fingerprints = [...new Set(derived.flatMap((version) => version.risks.map((risk) => risk.fingerprint)))];
  const resolvedTriages = new Map<string, StoredTriageRow>();
  const recordedRegressions = new Map<string, { at: Date; fingerprint: unknown }[]>();
  if (!threadIds.length || !fingerprints.length) return { resolvedTriages, recordedRegressions };
  // The step's threads (at most a batch of them) with each chunk of fingerprints; pairs that
  // no packet of the step carries are left out below.
  const triages = await inChunks(fingerprints, (chunk) =>
    sql.query<ExecutorRow<RiskTriage>>(
      Prisma.sql`SELECT "threadId", "fingerprint", "state", "snoozedUntil", "severityAtTriage", "updatedAt", "updatedBy" FROM "RiskTriage"
        WHERE "state" = 'resolved' AND "threadId" IN (${list(threadIds)}) AND "fingerprint" IN (${list(chunk)})`,
    ),
  );
  const threadKeys = new Set<string>();
  const threadKeyOf = new Map(packets.map((row) => [versions.get(row.versionId!)?.threadId, row.threadKey!]));
  for (const triage of triages) {
    resolvedTriages.set(stepKey(triage.threadId, triage.fingerprint), {
      ...triage,
      snoozedUntil: optionalInstant(triage.snoozedUntil),
      updatedAt: instant(triage.updatedAt),
    });
    const key = threadKeyOf.get(triage.threadId);
    if (key) threadKeys.add(key);
  }
  const recorded = await inChunks([...threadKeys], (chunk) =>
    sql.query<ExecutorRow<Pick<LedgerEvent, "threadKey" | "at" | "data">>>(
      Prisma.sql`SELECT "threadKey", "at", "data" FROM "LedgerEvent" WHERE "kind" = 'risk_regressed' AND "threadKey" IN (${list(chunk)})`,
    ),
  );
  for (const row of recorded) {
    const events = recordedRegressions.get(row.threadKey!) ?? [];
    events.push({ at: instant(row.at), fingerprint: eventData(row.data).fingerprint });
    recordedRegressions.set(row.threadKey!, events);
  }
  return { resolvedTriages, recordedRegressions };
}
