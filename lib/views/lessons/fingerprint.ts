import "server-only";
import { sha256Hex } from "../../contract/canonical-json";
import { normaliseRiskDetail } from "../../contract/fingerprint";

/**
 * What changes from one run of the same failure to the next, each replaced by a
 * placeholder before the risk normaliser (case, spacing, digits-only tokens,
 * quoted paths) runs. Order matters: timestamps before their digits, temp paths
 * before the hex names inside them.
 */
const VOLATILE: readonly [RegExp, string][] = [
  // ISO 8601 dates and date-times, with or without seconds, fraction and zone.
  [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/gi, "<time>"],
  // Clock times with seconds (12:04:59, 7:03:01.250); "file.ts:12:4" (line and column) has no third part.
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, "<time>"],
  // Unix times in seconds or milliseconds (2001 to 2033).
  [/\b1\d{9}(?:\d{3})?\b/g, "<time>"],
  // Temporary folders: /tmp, /var/tmp, /dev/shm, macOS /var/folders, $TMPDIR, Windows %TEMP% and ...\Temp\.
  [
    /(?<![\w.~-])(?:(?:\/private)?\/var\/folders\/|\/(?:var\/)?tmp(?:\/|\b)|\/dev\/shm\/|\$\{?TMPDIR\}?[\\/]?|%TE?MP%\\?|[a-z]:\\(?:[^\s"'`\\]{1,255}\\){0,32}?(?:temp|tmp)(?:\\|\b))[^\s"'`]*/gi,
    "<tmp>",
  ],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<id>"],
  // Hex ids and hashes: 0x..., or a whole word of 7+ hex digits mixing digits and letters (a short git sha, a sha256).
  [/\b0x[0-9a-f]+\b/gi, "<hex>"],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, "<hex>"],
  // Durations: "after 12.5s", "in 340 ms", "10 minutes".
  [/\b\d+(?:\.\d+)?\s?(?:ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b/gi, "<duration>"],
];

/** Text is cut to this before the patterns run, so no input can make them slow (docs/product.md#recurring-failures). */
export const FAILURE_TEXT_MAX = 2_000;

/** Normalises a failed attempt's command or reason so that the same failure, run again elsewhere or later, groups under one fingerprint. */
export function normaliseFailureText(text: string): string {
  let normalised = text.slice(0, FAILURE_TEXT_MAX).trim().replace(/^[$>]\s+/, "");
  for (const [pattern, placeholder] of VOLATILE) normalised = normalised.replace(pattern, placeholder);
  return normaliseRiskDetail(normalised)
    .replace(/(["'`])(<[a-z]+>)\1/g, "$2")
    .replace(/[.\s]+$/, "");
}

/** The lessons view's grouping key: the normalised attempt and the normalised reason. */
export function failureFingerprint(attempt: string, reason?: string | null): string {
  return sha256Hex(`${normaliseFailureText(attempt)}\n${normaliseFailureText(reason ?? "")}`).slice(0, 24);
}
