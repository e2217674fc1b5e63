import { z } from "zod";
import { BatonError } from "../core/errors";
import { redactSecrets } from "./secrets";

/**
 * Verdict reports sent with a packet (docs/contract.md#reports-sent-with-a-packet,
 * docs/decisions/051-verdict-reports-travel.md): any HTTP client may wrap a packet as
 * `{"packet": {...}, "reports": [{"ref": "outputs/verification/T-1.json", "report": {...}}]}`,
 * each `ref` one of the packet's relative verdict pointers.
 */

export const REPORT_MAX_BYTES = 256 * 1024;
export const REPORTS_MAX_TOTAL_BYTES = 1024 * 1024;
export const REPORTS_MAX = 20;
export const REPORT_REF_MAX = 1024;

export const attachedReportInputSchema = z.strictObject({
  ref: z.string().min(1).max(REPORT_REF_MAX),
  report: z.unknown(),
});

export const packetEnvelopeSchema = z.strictObject({
  packet: z.record(z.string(), z.unknown()),
  reports: z.array(attachedReportInputSchema).max(REPORTS_MAX),
});
export type PacketEnvelope = z.infer<typeof packetEnvelopeSchema>;

/** A verdict report ready to store: the pointer's relative path and the report's JSON, redacted. */
export interface AttachedReport {
  ref: string;
  json: string;
  bytes: number;
}

/** A body with exactly the keys `packet` and `reports` is an envelope, not a packet (no packet field is named so). */
export function isPacketEnvelope(value: unknown): value is Record<"packet" | "reports", unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 2 && keys.includes("packet") && keys.includes("reports");
}

/** Parses an envelope, naming the field that is wrong. */
export function parsePacketEnvelope(value: unknown): PacketEnvelope {
  const parsed = packetEnvelopeSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length ? issue.path.join(".") : "body";
  throw new BatonError(
    "invalid_request",
    `${field}: ${issue.message}. A packet with reports is {"packet": {...}, "reports": [{"ref": "<verdict pointer path>", "report": {...}}]} (at most ${REPORTS_MAX} reports).`,
    { field },
  );
}

/**
 * Checks each report against the packet's own pointers and the size limits, and redacts
 * it (report files are agent text: decision 020). Only relative pointers take a report:
 * a URL is a link, never fetched or replaced.
 */
export function prepareAttachedReports(
  reports: PacketEnvelope["reports"],
  pointers: readonly { ref: string }[] | undefined,
): AttachedReport[] {
  const named = new Set((pointers ?? []).map((pointer) => pointer.ref).filter((ref) => !/^[a-zA-Z][a-zA-Z0-9+.-]+:/.test(ref)));
  const seen = new Set<string>();
  let total = 0;
  return reports.map(({ ref, report }, index) => {
    const field = `reports.${index}.ref`;
    if (!named.has(ref)) {
      throw new BatonError("invalid_request", `${field} "${ref}" is not one of the packet's relative verdict_pointer paths; send only the reports the packet points to.`, { field });
    }
    if (seen.has(ref)) throw new BatonError("invalid_request", `${field} "${ref}" is sent twice; send each report once.`, { field });
    seen.add(ref);
    const json = JSON.stringify(redactSecrets(report ?? null).value);
    const bytes = Buffer.byteLength(json);
    if (bytes > REPORT_MAX_BYTES) {
      throw new BatonError("payload_too_large", `reports.${index}.report is ${bytes} bytes; a report may be at most ${REPORT_MAX_BYTES}.`, {
        field: `reports.${index}.report`,
        limit_bytes: REPORT_MAX_BYTES,
      });
    }
    total += bytes;
    if (total > REPORTS_MAX_TOTAL_BYTES) {
      throw new BatonError("payload_too_large", `The reports of one packet may be at most ${REPORTS_MAX_TOTAL_BYTES} bytes together.`, {
        field: "reports",
        limit_bytes: REPORTS_MAX_TOTAL_BYTES,
      });
    }
    return { ref, json, bytes };
  });
}
