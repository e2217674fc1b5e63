import { mapToContract } from "./aliases";
import { BatonError } from "../core/errors";
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

/** Validates a mapped packet; a refused field is named as the producer spelled it. */
function validateMapped(packet: Record<string, unknown>, renamed: [from: string, to: string][]) {
  try {
    return validatePacket(packet);
  } catch (error) {
    if (!(error instanceof BatonError) || error.code !== "invalid_fields" || !renamed.length) throw error;
    const spelled = new Map(renamed.map(([from, to]) => [to, from]));
    const fields = (error.details as { fields: { field: string; problem: string; accepts: string }[] }).fields.map((problem) => {
      const top = /^[^.[]+/.exec(problem.field)?.[0] ?? problem.field;
      const from = spelled.get(top);
      return from ? { ...problem, field: `${from}${problem.field.slice(top.length)} (read as ${top})` } : problem;
    });
    throw new BatonError(
      "invalid_fields",
      `Not stored: ${fields.map((f) => `${f.field} (${f.problem}) accepts ${f.accepts}`).join("; ")}.`,
      { fields },
    );
  }
}

/**
 * Validate, normalise, hash. Secrets are redacted first (lib/contract/secrets.ts), so
 * what is validated, hashed, stored, served, rendered and announced is the redacted
 * packet; the caller's value is not modified. `boundProject` is the project of the
 * token that sent it, when the token has one.
 */
export function preparePacket(value: unknown, receivedAtMs: number, boundProject?: string): PreparedPacket {
  const redaction = redactSecrets(value);
  const redacted = redaction.value as Record<string, unknown>;
  // Other producers' names are read as the contract's (lib/contract/aliases.ts); the packet as
  // received is what is stored and hashed.
  const mapped = mapToContract(redacted);
  const input = validateMapped(mapped.packet, mapped.mappedFrom?.renamed ?? []);
  const normalised = normalisePacket(input, mapped.packet, mapped.mappedFrom);
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
