/** The one place that maps incoming severity words to Baton's five levels. */

export const SEVERITIES = ["critical", "high", "medium", "low", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];

const WORDS: Record<Severity, readonly string[]> = {
  critical: ["critical", "crit", "blocker", "block", "blocking", "fatal", "p0", "sev0", "sev1"],
  high: ["high", "error", "major", "severe", "p1", "sev2"],
  medium: ["medium", "med", "moderate", "warn", "warning", "p2", "sev3"],
  low: ["low", "minor", "p3", "sev4"],
  info: ["info", "informational", "note", "trivial", "p4"],
};

const BY_WORD = new Map<string, Severity>(
  SEVERITIES.flatMap((severity) => WORDS[severity].map((word) => [word, severity] as const)),
);

export const SEVERITY_WORDS: Readonly<Record<Severity, readonly string[]>> = WORDS;

/** A missing or unrecognised word falls back to medium and is reported as unknown. */
export function normaliseSeverity(raw: string | number | null | undefined): {
  severity: Severity;
  known: boolean;
} {
  if (raw === null || raw === undefined) return { severity: "medium", known: false };
  const found = BY_WORD.get(String(raw).trim().toLowerCase());
  return found ? { severity: found, known: true } : { severity: "medium", known: false };
}

/** Higher number = more severe; used for sorting and "highest severity". */
export function severityRank(severity: Severity): number {
  return SEVERITIES.length - SEVERITIES.indexOf(severity);
}

export function highestSeverity(severities: Iterable<Severity>): Severity | null {
  let best: Severity | null = null;
  for (const severity of severities) {
    if (best === null || severityRank(severity) > severityRank(best)) best = severity;
  }
  return best;
}

export function isSeverity(value: unknown): value is Severity {
  return typeof value === "string" && (SEVERITIES as readonly string[]).includes(value);
}
