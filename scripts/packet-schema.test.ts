import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { packetJsonSchema } from "../lib/contract/json-schema";
import { PACKET_SCHEMA_FILE, renderPacketSchema } from "./packet-schema";

// docs/packet.schema.json is generated from the zod schema; a change to the schema that
// is not regenerated fails here, with the command that puts it right.

describe("docs/packet.schema.json", () => {
  it("is what the zod schema generates now (else run `npm run docs:schema`)", () => {
    expect(readFileSync(PACKET_SCHEMA_FILE, "utf8")).toBe(renderPacketSchema());
  });

  it("is the schema GET /api/v1/schema serves", () => {
    expect(JSON.parse(readFileSync(PACKET_SCHEMA_FILE, "utf8"))).toEqual(packetJsonSchema());
  });
});
