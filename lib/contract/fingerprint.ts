import { sha256Hex } from "./canonical-json";

/**
 * Normalises a risk's detail so that the same risk, reworded only in case,
 * spacing, counts or the file it quotes, gets the same fingerprint.
 */
export function normaliseRiskDetail(detail: string): string {
  return detail
    .toLowerCase()
    .replace(/(["'`])[^"'`\s]*[\/\\.][^"'`\s]*\1/g, "<path>")
    // Only whole tokens of digits: "retried 3 times" and "retried 5 times" match, "T-014" and "T-015" do not.
    .replace(/(?<=^|\s)\d+(?=$|\s|[,;:!?)](?:\s|$)|\.(?:\s|$))/g, "<n>")
    .replace(/\s+/g, " ")
    .trim();
}

export function riskFingerprint(detail: string): string {
  return sha256Hex(normaliseRiskDetail(detail)).slice(0, 24);
}
