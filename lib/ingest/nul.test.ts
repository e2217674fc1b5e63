import { describe, expect, it } from "vitest";
import { database } from "../db/client";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { ingestPacket } from "./ingest";

freshDatabaseForThisFile();

describe("U+0000 in a packet's text", () => {
  it("is stored as U+FFFD on either database, and the packet as received keeps it", async () => {
    const body = {
      thread: "nul-text",
      summary: "sum\u0000mary",
      next_action: "go\u0000on",
      open_risks: [{ severity: "high", detail: "detail\u0000" }],
      x_extra: { "key\u0000": ["value\u0000"] },
    };
    const result = await ingestPacket(body, { kind: "http", actor: "token:test" });
    const db = await database();
    const version = await db.packetVersion.findUniqueOrThrow({ where: { id: result.packet_id } });
    expect(version.summary).toBe("sum\uFFFDmary");
    expect(JSON.parse(version.canonicalJson)).toMatchObject({ next_action: { text: "go\uFFFDon" }, open_risks: [{ detail: "detail\uFFFD" }], extra: { x_extra: { "key\uFFFD": ["value\uFFFD"] } } });
    expect(JSON.parse(version.receivedJson)).toEqual(body);
  });
});
