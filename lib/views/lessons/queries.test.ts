import { beforeAll, describe, expect, it } from "vitest";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { ingestPacket, type IngestSource } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { LESSON_WINDOW_DAYS } from "./dto";
import { failureFingerprint } from "./fingerprint";
import { listLessons } from "./queries";

freshDatabaseForThisFile();

const http: IngestSource = { kind: "http", actor: "test" };
const DAY = 86_400_000;
const T0 = Date.parse("2026-11-01T08:00:00.000Z");
const at = (days: number) => new Date(T0 + days * DAY);

let sequence = 0;
/** A distinct packet (its summary differs) on `thread`, with these failed attempts. */
function packet(thread: string, failedAttempts: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  sequence++;
  return {
    thread,
    agent: `${thread}-bot`,
    summary: `step ${sequence}`,
    changed_files: ["src/a.ts"],
    commands_run: ["npm test"],
    failed_attempts: failedAttempts,
    open_risks: [],
    next_action: `continue ${sequence}`,
    verdict_pointer: "outputs/verification/T-1.json",
    ...extra,
  };
}

const store = (thread: string, attempts: unknown[], day: number, extra?: Record<string, unknown>) =>
  ingestPacket(packet(thread, attempts, extra), http, at(day));

describe("FailedAttempt rows at ingest", () => {
  it("stores one fingerprinted row per failed attempt, in the version's transaction", async () => {
    const result = await store("rows/a", ["make deploy -> exit 2", { attempt: "npm run e2e", reason: "port 3000 in use", exit_code: 1 }], 0);
    const sql = await sqlExecutor();
    const stored = await sql.query<{ attempt: string; reason: string | null; exitCode: bigint | null; fingerprint: string; seenAt: string }>(
      Prisma.sql`SELECT "attempt", "reason", "exitCode", "fingerprint", "seenAt" FROM "FailedAttempt" WHERE "versionId" = ${result.packet_id} ORDER BY "attempt"`,
    );
    const rows = stored.map((row) => ({ ...row, exitCode: row.exitCode === null ? null : Number(row.exitCode) }));
    expect(rows).toEqual([
      { attempt: "make deploy -> exit 2", reason: null, exitCode: 2, fingerprint: failureFingerprint("make deploy -> exit 2"), seenAt: expect.any(String) },
      { attempt: "npm run e2e", reason: "port 3000 in use", exitCode: 1, fingerprint: failureFingerprint("npm run e2e", "port 3000 in use"), seenAt: expect.any(String) },
    ]);
    expect(new Date(rows[0]!.seenAt).toISOString()).toBe(at(0).toISOString());
  });

  it("stores nothing for a duplicate packet", async () => {
    const body = packet("rows/dup", ["flaky once"]);
    await ingestPacket(body, http, at(0));
    await ingestPacket(body, http, at(0));
    const sql = await sqlExecutor();
    const [row] = await sql.query<{ count: number | bigint }>(Prisma.sql`SELECT COUNT(*) AS "count" FROM "FailedAttempt" WHERE "attempt" = 'flaky once'`);
    expect(Number(row!.count)).toBe(1);
  });
});

describe("listLessons", () => {
  const now = at(40);

  beforeAll(async () => {
    // The same dlq failure, worded differently, in two versions of one thread and one of another.
    await store("pay/dlq", [{ attempt: "npm run test:dlq", reason: "timed out after 10 minutes waiting for the local queue" }], 20);
    await store("pay/dlq", [{ attempt: "$ npm run  test:dlq", reason: "Timed out after 12 minutes waiting for the local queue." }], 25);
    await store("pay/refunds", [{ attempt: "npm run test:dlq", reason: "timed out after 9 minutes waiting for the local queue" }], 30);
    // Seen twice, but the last time 31 days before `now`: dropped.
    await store("old/one", ["terraform plan -> exit 1"], 5);
    await store("old/two", ["terraform plan -> exit 1"], 9);
    // Only once: not a lesson.
    await store("web/once", [{ attempt: "pnpm build", reason: "out of memory" }], 35);
    // Twice in ONE version: not a repeat across versions.
    await store("web/twice", [{ attempt: "pnpm lint", reason: "eslint crashed" }, { attempt: "pnpm lint", reason: "ESLint crashed" }], 35);
    // Seen most recently, in two versions of one thread.
    await store("web/cache", [{ attempt: "rm -rf /tmp/cache-8f3a2b1c && next build", reason: "stale cache at 2026-12-01T10:00:00Z" }], 36);
    await store("web/cache", [{ attempt: "rm -rf /tmp/cache-77aa01bc && next build", reason: "stale cache at 2026-12-05T11:30:00Z" }], 38);
  });

  it("groups the same failure across versions and threads, newest first, with counts and threads", async () => {
    const { lessons, window_days, truncated } = await listLessons({}, now);
    expect(window_days).toBe(LESSON_WINDOW_DAYS);
    expect(truncated).toBe(false);
    expect(lessons.map((lesson) => lesson.attempt)).toEqual(["rm -rf /tmp/cache-77aa01bc && next build", "npm run test:dlq"]);

    const [cache, dlq] = lessons;
    expect(cache).toMatchObject({
      occurrences: 2,
      thread_count: 1,
      threads: [{ key: "web/cache", agent: "web/cache-bot", last_seen: at(38).toISOString() }],
      first_seen: at(36).toISOString(),
      last_seen: at(38).toISOString(),
      reason: "stale cache at 2026-12-05T11:30:00Z",
    });
    expect(dlq).toMatchObject({
      fingerprint: failureFingerprint("npm run test:dlq", "timed out after 10 minutes waiting for the local queue"),
      // The latest wording represents the group.
      reason: "timed out after 9 minutes waiting for the local queue",
      occurrences: 3,
      thread_count: 2,
      first_seen: at(20).toISOString(),
      last_seen: at(30).toISOString(),
    });
    expect(dlq!.threads.map((thread) => thread.key)).toEqual(["pay/refunds", "pay/dlq"]);
  });

  it("drops an entry not seen for 30 days, and lists it while it was", async () => {
    const attempts = async (day: number) => (await listLessons({}, at(day))).lessons.map((lesson) => lesson.attempt);
    // Last seen on day 9: listed up to 30 days after its first sighting (day 5), both in the window.
    expect(await attempts(35)).toContain("terraform plan -> exit 1");
    // On day 36 the first sighting is out of the window: one occurrence is left, not a lesson.
    expect(await attempts(36)).not.toContain("terraform plan -> exit 1");
    // Not seen for more than 30 days: gone.
    expect(await attempts(40)).not.toContain("terraform plan -> exit 1");
    // Versions that arrive after `now` do not count yet.
    expect(await attempts(10)).toEqual(["terraform plan -> exit 1"]);
  });

  it("filters by free text on the attempt, the reason and the threads", async () => {
    const attempts = async (q: string) => (await listLessons({ q }, now)).lessons.map((lesson) => lesson.attempt);
    expect(await attempts("TEST:DLQ")).toEqual(["npm run test:dlq"]);
    expect(await attempts("stale cache")).toEqual(["rm -rf /tmp/cache-77aa01bc && next build"]);
    expect(await attempts("pay/refunds")).toEqual(["npm run test:dlq"]);
    expect(await attempts("web/cache-bot")).toEqual(["rm -rf /tmp/cache-77aa01bc && next build"]);
    expect(await attempts("nothing like this")).toEqual([]);
    // LIKE wildcards are taken literally.
    expect(await attempts("%")).toEqual([]);
    expect(await attempts("_")).toEqual([]);
  });
});
