import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ingestPacket } from "../../ingest/ingest";
import { clearVerdictCache, peekVerdictCached, verdictCacheSize, verdictPlaceKey } from "./cache";
import { readVersionVerdicts } from "./version";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { makeTempWorkspace, type TempWorkspace } from "@/testing/temp-workspace";
import { routinePacket } from "@/testing/packets";

/**
 * Ingest reads a new version's verdict from the packet in hand (primeNewVersionVerdict):
 * the reading is in the cache when ingest returns, and it is the reading the version's
 * stored rows give when read afresh, for every way a verdict arrives.
 */

freshDatabaseForThisFile();
let ws: TempWorkspace;
beforeAll(async () => {
  ws = await makeTempWorkspace();
  await ws.write("ws/outputs/verification/T-9.json", JSON.stringify({ passed: false, failures: ["login test"] }));
});
afterAll(async () => ws?.remove());
beforeEach(() => clearVerdictCache());

const http = { kind: "http", actor: "token:test" } as const;

async function expectPrimed(packetId: string, roots: string[], refs: string[]) {
  const primed = peekVerdictCached(packetId, verdictPlaceKey(roots, new Map(refs.map((ref) => [ref, ""]))));
  expect(primed, "the reading is cached when ingest returns").toBeDefined();
  const fresh = (await readVersionVerdicts([packetId], { fresh: true })).get(packetId)!;
  // The same reading but for when it was made.
  expect({ ...(await primed), read_at: fresh.read_at }).toEqual(fresh);
  return fresh;
}

describe("a new version's verdict, read at ingest", () => {
  it("an inline verdict over HTTP", async () => {
    const result = await ingestPacket(routinePacket({ thread: "prime-inline", verdict: { passed: false, failures: ["e2e"] } }), http);
    expect(verdictCacheSize()).toBe(1);
    expect((await expectPrimed(result.packet_id, [], [])).summary.state).toBe("fail");
  });

  it("a report sent with the packet", async () => {
    const ref = "outputs/verification/T-1.json";
    const result = await ingestPacket(routinePacket({ thread: "prime-attached" }), { ...http, reports: [{ ref, report: { passed: true } }] });
    const reading = await expectPrimed(result.packet_id, [], [ref]);
    expect(reading.pointers.map((pointer) => [pointer.status, pointer.from])).toEqual([["ok", "attached"]]);
  });

  it("read afresh together, each version with its own reports", async () => {
    const ref = "outputs/verification/T-1.json";
    const sent = await ingestPacket(routinePacket({ thread: "fresh-attached" }), { ...http, reports: [{ ref, report: { passed: false, failures: ["unit"] } }] });
    const plain = await ingestPacket(routinePacket({ thread: "fresh-plain", verdict: { passed: true } }), http);
    clearVerdictCache();
    const readings = await readVersionVerdicts([sent.packet_id, plain.packet_id]);
    expect(readings.get(sent.packet_id)!.pointers.map((pointer) => [pointer.status, pointer.from])).toEqual([["ok", "attached"]]);
    expect(readings.get(sent.packet_id)!.summary.state).toBe("fail");
    // The same pointer, but no report of its own: the other version's is not read for it.
    expect(readings.get(plain.packet_id)!.pointers.map((pointer) => pointer.from)).not.toContain("attached");
  });

  it("a watched file's report in its workspace", async () => {
    const sourcePath = path.join(ws.root, "outputs", "handoff", "s-1", "handoff.json");
    const packet = routinePacket({ thread: "prime-file", verdict_pointer: "outputs/verification/T-9.json" });
    const result = await ingestPacket(packet, { kind: "file", actor: "watcher", sourcePath, workspaceRoot: ws.root });
    const reading = await expectPrimed(result.packet_id, [ws.root], []);
    expect([reading.summary.state, reading.pointers[0]?.from]).toEqual(["fail", "workspace"]);
  });

  it("not again for a duplicate", async () => {
    const packet = routinePacket({ thread: "prime-duplicate" });
    await ingestPacket(packet, http);
    clearVerdictCache();
    expect((await ingestPacket(packet, http)).duplicate).toBe(true);
    expect(verdictCacheSize()).toBe(0);
  });
});
