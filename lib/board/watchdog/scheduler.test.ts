import { afterEach, describe, expect, it, vi } from "vitest";
import { resetConfig } from "../../server/config";
import { closeDatabase, database } from "../../db/client";
import { ingestPacket } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { runWatchdogRound, startWatchdog, stopWatchdog } from "./scheduler";

const temp = freshDatabaseForThisFile();

afterEach(async () => {
  await stopWatchdog();
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;

async function eventKinds(thread: string): Promise<string[]> {
  const rows = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread }, orderBy: { seq: "asc" } });
  return rows.map((row) => row.kind);
}

describe("the watchdog's schedule", () => {
  it("runs a round as soon as it starts, once per process however often it is started", async () => {
    const thread = "scheduled/old";
    await ingestPacket({ thread, summary: "old work", next_action: "continue" }, { kind: "http", actor: "test" }, new Date(Date.now() - 30 * HOUR));
    const timers = vi.spyOn(globalThis, "setInterval");
    startWatchdog();
    startWatchdog();
    expect(timers).toHaveBeenCalledTimes(1);
    await vi.waitFor(async () => expect(await eventKinds(thread)).toEqual(["packet_received", "thread_stale"]), { timeout: 10_000 });
  });

  it("a round that fails is logged and does not throw", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const url = process.env.DATABASE_URL;
    // A database that cannot be opened.
    process.env.DATABASE_URL = `file:${temp().dir}/not-a-folder/\0/baton.db`;
    resetConfig();
    try {
      await expect(runWatchdogRound()).resolves.toBeUndefined();
    } finally {
      await closeDatabase();
      process.env.DATABASE_URL = url;
      resetConfig();
    }
    expect(errors).toHaveBeenCalledTimes(2);
    expect(String(errors.mock.calls[0]![0])).toMatch(/stale check failed/);
  });
});
