import { redactSecrets } from "./secrets";
import { packetContentHash } from "./canonical-json";
import type { CanonicalPacket } from "./canonical";
import { lintPacket, type Flag } from "./lint";
import { normalisePacket } from "./normalise";
import { withBoundProject } from "./project-binding";
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
  /** Secrets replaced by `[redacted:<kind>]` before anything else saw the packet (decision 020). */
  secretsRedacted: { count: number; kinds: string[] };
}

/**
 * Validate, normalise, hash. Secrets are redacted first (lib/contract/secrets.ts), so
 * what is validated, hashed, stored, served, rendered and announced is the redacted
 * packet; the caller's value is not modified. `boundProject` is the project of the
 * token that sent it, when the token has one.
 */
export function preparePacket(value: unknown, receivedAtMs: number, boundProject?: string): PreparedPacket {
  const redaction = redactSecrets(value);
  const input = validatePacket(redaction.value);
  const redacted = redaction.value as Record<string, unknown>;
  const normalised = normalisePacket(input, redacted);
  const { received, canonical } = withBoundProject(redacted, normalised.canonical, boundProject);
  const { notes } = normalised;
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
    secretsRedacted: { count: redaction.count, kinds: redaction.kinds },
  };
}
