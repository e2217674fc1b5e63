import { packetContentHash } from "./canonical-json";
import type { CanonicalPacket } from "./canonical";
import { lintPacket, type Flag } from "./lint";
import { normalisePacket } from "./normalise";
import { highestSeverity, SEVERITIES, type Severity } from "./severity";
import { threadKeyFor } from "./thread-key";
import { validatePacket } from "./validate";

/** Everything ingest needs to store one version, computed without touching the database. */
export interface PreparedPacket {
  received: Record<string, unknown>;
  canonical: CanonicalPacket;
  contentHash: string;
  threadKey: string;
  flags: Flag[];
  createdAtMs: number | null;
  highestSeverity: Severity | null;
  riskCounts: Record<Severity, number>;
}

export function preparePacket(value: unknown, receivedAtMs: number): PreparedPacket {
  const input = validatePacket(value);
  const received = value as Record<string, unknown>;
  const { canonical, notes } = normalisePacket(input, received);
  const contentHash = packetContentHash(received);
  const risks = canonical.open_risks ?? [];
  const riskCounts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
  for (const risk of risks) riskCounts[risk.severity]++;
  return {
    received,
    canonical,
    contentHash,
    threadKey: threadKeyFor(canonical, contentHash),
    flags: lintPacket(canonical, notes, receivedAtMs),
    createdAtMs: notes.createdAtMs,
    highestSeverity: highestSeverity(risks.map((risk) => risk.severity)),
    riskCounts,
  };
}
