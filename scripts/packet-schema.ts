import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { packetJsonSchema } from "../lib/contract/json-schema";

// `npm run docs:schema`: writes docs/packet.schema.json as GET /api/v1/schema serves it (lib/contract/json-schema.ts);
// scripts/packet-schema.test.ts fails when it is stale (docs/contract.md).

export const PACKET_SCHEMA_FILE = fileURLToPath(new URL("../docs/packet.schema.json", import.meta.url));

/** The file's text: 2-space JSON and a final newline. */
export function renderPacketSchema(): string {
  return `${JSON.stringify(packetJsonSchema(), null, 2)}\n`;
}

// Run as a script (tsx scripts/packet-schema.ts), not when the test imports it.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  writeFileSync(PACKET_SCHEMA_FILE, renderPacketSchema());
  console.log(`wrote ${path.relative(process.cwd(), PACKET_SCHEMA_FILE)}`);
}
