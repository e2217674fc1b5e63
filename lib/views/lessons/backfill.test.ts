import { describe, expect, it } from "vitest";
import { inTransaction, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { ingestPacket, type IngestResult, type IngestSource } from "../../ingest/ingest";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { BACKFILL_CURSOR, backfillFailedAttempts } from "./backfill";
import { failureFingerprint } from "./fingerprint";
import { listLessons } from "./queries";

freshDatabaseForThisFile();

const http: IngestSource = { kind: "http", actor: "test" };
const DAY = 86_400_000;
const NOW = new Date("2026-12-01T12:00:00.000Z");
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

let sequence = 0;
function packet(thread: string, failedAttempts: unknown[]): Record<string, unknown> {
  sequence++;
  return { thread, summary: `step ${sequence}`, failed_attempts: failedAttempts, next_action: `continue ${sequence}`, open_risks: [] };
}

async function write(statement: Prisma.Sql): Promise<void> {
  await inTransaction(async (tx) => (await sqlExecutor(tx)).execute(statement));
}

async function failedAttempts(): Promise<{ versionId: string; attempt: string; fingerprint: string; seenAt: string }[]> {
  return (await sqlExecutor()).query(Prisma.sql`SELECT "versionId", "attempt", "fingerprint", "seenAt" FROM "FailedAttempt" ORDER BY "versionId", "attempt"`);
}

// SQLite only: PostgreSQL support began with FailedAttempt in the schema, so there is nothing to backfill there.
describe.skipIf(testsRunOnPostgresql())("backfillFailedAttempts", () => {
  it("fills the rows of versions stored before ingest wrote them, once, in small batches", async () => {
    const recent: IngestResult[] = [];
    for (let index = 0; index < 7; index++) {
      recent.push(await ingestPacket(packet(`bf/${index % 3}`, ["npm run e2e -> exit 1", { attempt: `step ${index}`, reason: "flaky" }]), http, daysAgo(10 - index)));
    }
    const none = await ingestPacket(packet("bf/none", []), http, daysAgo(3));
    const old = await ingestPacket(packet("bf/old", ["npm run e2e -> exit 1"]), http, daysAgo(31));
    const ingested = await failedAttempts();
    expect(ingested).toHaveLength(15);

    // As if stored before this change: no rows, no cursor.
    await write(Prisma.sql`DELETE FROM "FailedAttempt"`);
    expect(await listLessons({}, NOW)).toMatchObject({ lessons: [] });

    const first = await backfillFailedAttempts({ now: NOW, batchSize: 2 });
    expect(first).toEqual({ versions: 7, rows: 14 });
    const filled = await failedAttempts();
    // The same rows ingest wrote, but for the version older than the window.
    const strip = (rows: typeof filled) => rows.map(({ versionId, attempt, fingerprint, seenAt }) => ({ versionId, attempt, fingerprint, seenAt }));
    expect(strip(filled)).toEqual(strip(ingested.filter((row) => row.versionId !== old.packet_id)));
    expect(filled.map((row) => row.versionId)).not.toContain(none.packet_id);
    expect(filled.find((row) => row.versionId === recent[0]!.packet_id)).toMatchObject({
      fingerprint: failureFingerprint("npm run e2e -> exit 1"),
      seenAt: "2026-11-21T12:00:00.000+00:00",
    });

    const [lesson] = (await listLessons({}, NOW)).lessons;
    expect(lesson).toMatchObject({ attempt: "npm run e2e -> exit 1", occurrences: 7, thread_count: 3 });

    // A second run adds nothing.
    expect(await backfillFailedAttempts({ now: NOW, batchSize: 2 })).toEqual({ versions: 0, rows: 0 });
    expect(await failedAttempts()).toHaveLength(14);
  });

  it("skips versions that have their rows, even when the cursor is lost", async () => {
    await write(Prisma.sql`DELETE FROM "WorkerCursor" WHERE "name" = ${BACKFILL_CURSOR}`);
    const before = await failedAttempts();
    expect(await backfillFailedAttempts({ now: NOW, batchSize: 3 })).toEqual({ versions: 0, rows: 0 });
    expect(await failedAttempts()).toEqual(before);
  });

  it("after a run, looks only at versions stored since (which ingest already fingerprinted)", async () => {
    const later = await ingestPacket(packet("bf/later", ["cargo test -> exit 101"]), http, daysAgo(1));
    await write(Prisma.sql`DELETE FROM "FailedAttempt" WHERE "versionId" = ${later.packet_id}`);
    // The cursor is past everything stored before this version, and this one is looked at again.
    expect(await backfillFailedAttempts({ now: NOW })).toEqual({ versions: 1, rows: 1 });
    const [cursor] = await (await sqlExecutor()).query<{ seq: bigint }>(Prisma.sql`SELECT "seq" FROM "WorkerCursor" WHERE "name" = ${BACKFILL_CURSOR}`);
    const [top] = await (await sqlExecutor()).query<{ rowid: bigint }>(Prisma.sql`SELECT MAX("rowid") AS "rowid" FROM "PacketVersion"`);
    expect(Number(cursor!.seq)).toBe(Number(top!.rowid));
  });
});

describe.runIf(testsRunOnPostgresql())("backfillFailedAttempts on PostgreSQL", () => {
  it("has nothing to do: ingest wrote every row", async () => {
    await ingestPacket({ thread: "pg/backfill", summary: "one", next_action: "go", failed_attempts: [{ attempt: "ran it", reason: "broke" }] }, { kind: "http", actor: "test" });
    expect(await backfillFailedAttempts()).toEqual({ versions: 0, rows: 0 });
  });
});
