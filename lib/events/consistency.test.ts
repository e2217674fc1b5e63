import { rmSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sqliteFilePath } from "../server/config";
import { closeDatabase } from "../db/client";
import { ingestPacket, type IngestSource } from "../ingest/ingest";
import { minutePacket } from "@/testing/packets";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { checkDatabaseFile, checkLedgerConsistency, type ProblemKind } from "./consistency";

/**
 * The checker passes a ledger written by the real ingest path (late packets,
 * archive and reopen, risks, questions, failed attempts, idempotency keys), and
 * names each kind of damage done to a copy of it.
 */

const temp = freshDatabaseForThisFile();
const http: IngestSource = { kind: "http", actor: "token:test" };

const packet = (thread: string, minute: number, extra: Record<string, unknown> = {}) =>
  minutePacket(thread, minute, {
    open_risks: [
      { severity: "high", detail: `risk seen at minute ${minute}` },
      { severity: "low", detail: "helper is long" },
    ],
    questions_for_human: minute % 2 ? [{ id: "q1", question: `Keep step ${minute}?`, blocking: false }] : [],
    failed_attempts: minute % 3 ? [] : [{ attempt: "npm test", reason: `fails at minute ${minute}`, exit_code: 1 }],
    ...extra,
  });

let copies: string[] = [];

/** A copy of the database to damage (versions and events refuse UPDATE and DELETE: triggers are dropped in the copy). */
function damagedCopy(damage: (db: Database.Database) => void): string {
  const source = sqliteFilePath(temp().url);
  const copy = path.join(temp().dir, `copy-${copies.length}.db`);
  copies.push(copy);
  const original = new Database(source, { readonly: true });
  original.exec(`VACUUM INTO '${copy}'`);
  original.close();
  const db = new Database(copy);
  for (const { name } of db.prepare(`SELECT "name" FROM sqlite_master WHERE type = 'trigger'`).all() as { name: string }[]) {
    db.exec(`DROP TRIGGER "${name}"`);
  }
  damage(db);
  db.close();
  return copy;
}

function kindsIn(file: string): ProblemKind[] {
  return [...new Set(checkDatabaseFile(file).problems.map((problem) => problem.kind))];
}

describe("checkLedgerConsistency", () => {
  beforeAll(async () => {
    // Out of order within threads, so that late packets arrive already superseded.
    for (const minute of [3, 1, 4, 0, 5, 2]) {
      await ingestPacket(packet("cc-a", minute), http);
      await ingestPacket(packet("cc-b", minute), { ...http, idempotency: { tokenId: "tok_cc", key: `k-${minute}` } });
    }
    // Archived by its producer, then reopened by a newer packet; a batch of several at once.
    await ingestPacket(packet("cc-c", 1, { status: "archived" }), http);
    await ingestPacket(packet("cc-c", 2), http);
    await Promise.all([6, 7, 8].map((minute) => ingestPacket(packet("cc-a", minute), http)));
    await closeDatabase();
  });
  afterEach(() => {
    for (const copy of copies) rmSync(copy, { force: true });
    copies = [];
  });

  it("passes a ledger written by ingest", () => {
    const report = checkDatabaseFile(sqliteFilePath(temp().url));
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, integrity: "ok", problemCount: 0, versionsAwaitingFailedAttempts: 0 });
    expect(report.counts).toMatchObject({ threads: 3, versions: 17, risks: 34 });
    expect(report.counts.failedAttempts).toBeGreaterThan(0);
  });

  it("reads one snapshot on a connection it is given", () => {
    const db = new Database(sqliteFilePath(temp().url), { readonly: true });
    try {
      expect(checkLedgerConsistency(db).ok).toBe(true);
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
  });

  const damages: [string, ProblemKind[], (db: Database.Database) => void][] = [
    [
      "a version without its packet_received event",
      ["version_without_event", "ledger_disagrees"],
      (db) => db.exec(`DELETE FROM "LedgerEvent" WHERE "seq" = (SELECT max("seq") FROM "LedgerEvent" WHERE "kind" = 'packet_received')`),
    ],
    [
      "a version announced twice",
      ["version_with_several_events"],
      (db) =>
        db.exec(`INSERT INTO "LedgerEvent" ("at", "kind", "threadKey", "versionId", "actor", "data")
          SELECT "at", "kind", "threadKey", "versionId", "actor", '{"superseded_on_arrival":true}' FROM "LedgerEvent" WHERE "kind" = 'packet_received' LIMIT 1`),
    ],
    [
      "a version stored without its risks",
      ["child_rows"],
      (db) => db.exec(`DELETE FROM "Risk" WHERE "versionId" = (SELECT "versionId" FROM "Risk" LIMIT 1)`),
    ],
    [
      "a version with more failed-attempt rows than its packet has",
      ["child_rows"],
      (db) => {
        const { versionId } = db.prepare(`SELECT "versionId" FROM "FailedAttempt" LIMIT 1`).get() as { versionId: string };
        db.prepare(`INSERT INTO "FailedAttempt" SELECT "id" || '-x', "versionId", "threadId", "fingerprint", "attempt", "reason", "exitCode", "seenAt" FROM "FailedAttempt" WHERE "versionId" = ?`).run(versionId);
      },
    ],
    [
      "a question count that says otherwise",
      ["child_rows"],
      (db) => db.exec(`UPDATE "PacketVersion" SET "questionCount" = "questionCount" + 1 WHERE "id" = (SELECT min("id") FROM "PacketVersion")`),
    ],
    [
      "a thread whose active version is an older one",
      ["active_not_newest", "ledger_disagrees"],
      (db) =>
        db.exec(`UPDATE "Thread" SET "activeVersionId" = (SELECT v."id" FROM "PacketVersion" v WHERE v."threadId" = "Thread"."id" ORDER BY v."sortAt" LIMIT 1) WHERE "key" = 'cc-a'`),
    ],
    [
      "a thread whose copy of the active labels is stale",
      ["active_version"],
      (db) => db.exec(`UPDATE "Thread" SET "topic" = 'not the active one' WHERE "key" = 'cc-b'`),
    ],
    [
      "a thread archived behind the ledger's back",
      ["ledger_disagrees"],
      (db) => db.exec(`UPDATE "Thread" SET "archived" = 1 WHERE "key" = 'cc-b'`),
    ],
    [
      "a ledger event naming a version that is not stored",
      ["event_without_version"],
      (db) => db.exec(`INSERT INTO "LedgerEvent" ("at", "kind", "threadKey", "versionId", "actor", "data") VALUES ('2026-11-29T07:00:00.000+00:00', 'human_approved', 'cc-a', 'pv_missing', 'someone', '{}')`),
    ],
    [
      "a missing packet_superseded event",
      ["ledger_disagrees"],
      (db) => db.exec(`DELETE FROM "LedgerEvent" WHERE "seq" = (SELECT max("seq") FROM "LedgerEvent" WHERE "kind" = 'packet_superseded')`),
    ],
    [
      "an Idempotency-Key naming a version that is not stored",
      ["idempotency_without_version"],
      (db) => db.exec(`UPDATE "IdempotencyRecord" SET "packetId" = 'pv_missing' WHERE "key" = 'k-1'`),
    ],
    [
      "failed-attempt rows of a version that is not stored",
      ["orphan_child"],
      (db) => db.exec(`UPDATE "FailedAttempt" SET "versionId" = 'pv_gone'`),
    ],
  ];

  for (const [what, kinds, damage] of damages) {
    it(`names ${what}`, () => {
      const found = kindsIn(damagedCopy(damage));
      for (const kind of kinds) expect(found).toContain(kind);
    });
  }

  it("counts versions still waiting for the lessons backfill apart, not as damage", () => {
    const copy = damagedCopy((db) => db.exec(`DELETE FROM "FailedAttempt"`));
    const report = checkDatabaseFile(copy);
    expect(report.ok).toBe(true);
    expect(report.versionsAwaitingFailedAttempts).toBeGreaterThan(0);
  });
});
