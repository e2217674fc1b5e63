import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Packet bodies the tests send, as an agent would: plain objects, before validation.
 * `extra` overrides any field.
 */

/** A complete packet: the seven core fields, routine work, one low risk. */
export function routinePacket(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    summary: "routine work",
    changed_files: ["src/a.ts"],
    commands_run: ["npm test"],
    failed_attempts: [],
    open_risks: [{ severity: "low", detail: "helper is long" }],
    next_action: "run the suite again",
    verdict_pointer: "outputs/verification/T-1.json",
    ...extra,
  };
}

/** The reference minute 0 of minutePacket's clock. */
export const MINUTE_ZERO = Date.parse("2026-11-29T06:00:00.000Z");

/** A version of `thread` written `minute` minutes after MINUTE_ZERO, with a high risk of that minute. */
export function minutePacket(thread: string, minute: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    thread,
    summary: `${thread} at minute ${minute}`,
    next_action: `step ${minute}`,
    created_at: new Date(MINUTE_ZERO + minute * 60_000).toISOString(),
    open_risks: [{ severity: "high", detail: `risk seen at minute ${minute}` }],
    ...extra,
  };
}

/** testing/fixtures/examples/packets: one packet per shape agents send. */
export const EXAMPLE_PACKETS_DIR = fileURLToPath(new URL("./fixtures/examples/packets/", import.meta.url));

/** The example packets' file names, sorted. */
export const examplePacketNames = () => readdirSync(EXAMPLE_PACKETS_DIR).filter((file) => file.endsWith(".json")).sort();

/** One example packet's text. */
export const examplePacketText = (name: string) => readFileSync(path.join(EXAMPLE_PACKETS_DIR, name), "utf8");
